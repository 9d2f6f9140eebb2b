import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explainConcept, readDocEntry } from '../../../src/services/index.js';
import { writeTape } from '../../../src/services/tape/store.js';
import { ROOT, tempDir, thrown } from '../../_helpers.js';
import { ask, code, create, tape } from '../tape/_tapes.js';

/** An opted-in repository holding the seed docs, with one tape that wrote src/auth.ts. */
async function repository(): Promise<{ root: string; home: string; tapeId: string }> {
  const root = tempDir('engram-entry-');
  const home = tempDir('engram-entry-home-');
  execFileSync('git', ['init', '-q'], { cwd: root });
  const dir = join(root, 'docs', 'decisions');
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(root, '.engram', 'tapes'), { recursive: true });
  writeFileSync(join(root, '.engram', 'config.yaml'), 'model: sonnet\n');
  for (const name of readdirSync(join(ROOT, 'fixtures', 'knowledge', 'seed'))) copyFileSync(join(ROOT, 'fixtures', 'knowledge', 'seed', name), join(dir, name));
  mkdirSync(join(root, 'src'));
  const text = code('auth', 12);
  writeFileSync(join(root, 'src', 'auth.ts'), `// header\n${text}\n`);
  const registry = join(dir, 'concept_registry.md');
  writeFileSync(registry, `${readFileSync(registry, 'utf8')}\n## C050: auth_tokens (ACTIVE)\n- **Code:** \`src/auth.ts\`\n`);
  const written = await writeTape(join(root, '.engram', 'tapes'), tape('x', 1, [ask('write auth'), create('src/auth.ts', text, 2)]).events);
  return { root, home, tapeId: written.tape_id };
}

describe('readDocEntry', () => {
  it('reads a full entry with its fields, a stub with its graveyard entry, and refuses what is not there', async () => {
    const { root } = await repository();
    const full = readDocEntry({ cwd: join(root, 'src') }, 'E007');
    expect(full).toMatchObject({ id: 'E007', kind: 'claim', name: '2x_pullback edge', status: 'CONTESTED', form: 'full', file: 'docs/decisions/epistemic_state.md', points_to: null, graveyard: [] });
    expect(full.fields.map((field) => field.name)).toEqual(['Position', 'Evidence', 'Related concepts', 'Agent guidance']);
    expect(full.fields[1]!.value).toContain('#1404: "48.9% WR" → CURRENT BASELINE');
    const stub = readDocEntry({ cwd: root }, 'c012');
    expect(stub).toMatchObject({ id: 'C012', form: 'stub', status: 'DEAD', authoritative_status: 'DEAD', points_to: 'concept_graveyard.md#C012' });
    expect(stub.graveyard).toHaveLength(1);
    expect(stub.graveyard[0]!.text).toContain('- **Lesson:** Proximity alone was too aggressive');
    expect(thrown(() => readDocEntry({ cwd: root }, 'C999'))?.code).toBe('NOT_FOUND');
    expect(thrown(() => readDocEntry({ cwd: root }, 'proximity'))?.code).toBe('INVALID_INPUT');
  });
});

describe('explainConcept', () => {
  it("follows a concept's Code: pointer into explain and finds the session that wrote the code", async () => {
    const { root, home, tapeId } = await repository();
    const result = explainConcept({ cwd: root, home }, 'C050');
    expect(result.pointers).toHaveLength(1);
    expect(result.pointers[0]).toMatchObject({ kind: 'file', path: 'src/auth.ts', found: true });
    const span = result.pointers[0]!.explained[0]!;
    expect(span).toMatchObject({ file: 'src/auth.ts', start: 1, end: 13 });
    expect(span.response.results.map((r) => r.tape_id)).toEqual([tapeId]);
    // A concept whose code is gone has nothing to follow; a claim has no code at all.
    expect(explainConcept({ cwd: root, home }, 'C042').pointers.every((pointer) => !pointer.found && pointer.explained.length === 0)).toBe(true);
    expect(thrown(() => explainConcept({ cwd: root, home }, 'E007'))?.code).toBe('INVALID_INPUT');
  });
});
