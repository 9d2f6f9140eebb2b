import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compactProject, correctEntry, lintProject, readDocEntry } from '../../../src/services/index.js';
import { ROOT, tempDir, thrown } from '../../_helpers.js';

/** A git repository holding the seed docs at the default paths, committed (the graveyards' append-only baseline). */
function seedRepository(): string {
  const root = tempDir('engram-project-');
  const dir = join(root, 'docs', 'decisions');
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(root, '.engram'));
  writeFileSync(join(root, '.engram', 'config.yaml'), 'model: sonnet\n');
  for (const name of readdirSync(join(ROOT, 'fixtures', 'knowledge', 'seed'))) copyFileSync(join(ROOT, 'fixtures', 'knowledge', 'seed', name), join(dir, name));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'docs');
  return root;
}

const doc = (root: string, name: string) => readFileSync(join(root, 'docs', 'decisions', name), 'utf8');

describe('correctEntry', () => {
  it('appends a correction block (never editing the graveyard) and updates the stub; the result lints', () => {
    const root = seedRepository();
    const graveyard = doc(root, 'concept_graveyard.md');
    writeFileSync(join(root, 'docs', 'decisions', 'concept_registry.md'), `${doc(root, 'concept_registry.md')}\n## C089: adaptive_pruning (ACTIVE)\n- **Code:** \`swing_analysis/adaptive.py\`\n`);
    const result = correctEntry({ cwd: root, id: 'c012', to: 'evolved', successor: 'C089', note: 'It was reworked, not removed.', now: () => new Date('2026-02-20T09:00:00Z') });
    expect(result.block).toBe('## C012 CORRECTION (2026-02-20)\nReclassified: DEAD → EVOLVED → C089\nIt was reworked, not removed.');
    expect(result.stub).toBe('## C012: proximity_pruning (EVOLVED) → concept_graveyard.md#C012');
    expect(doc(root, 'concept_graveyard.md').startsWith(graveyard.trimEnd())).toBe(true);
    expect(lintProject({ cwd: root }).violations).toEqual([]);
    expect(readDocEntry({ cwd: root }, 'C012')).toMatchObject({ status: 'EVOLVED', authoritative_status: 'EVOLVED' });
    expect(thrown(() => correctEntry({ cwd: root, id: 'C012', to: 'refuted' }))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => correctEntry({ cwd: root, id: 'C042', to: 'DEAD' }))?.code).toBe('NOT_FOUND');
  });
});

describe('compactProject', () => {
  it('moves a DEAD entry still in full form to the graveyard, leaving its stub', () => {
    const root = seedRepository();
    const registry = doc(root, 'concept_registry.md').replace('## C043: TradeLogPanel (ACTIVE — HAS DEBT)', '## C043: TradeLogPanel (DEAD)');
    writeFileSync(join(root, 'docs', 'decisions', 'concept_registry.md'), registry);
    expect(lintProject({ cwd: root }).violations.map((v) => v.rule)).toEqual(['stub-missing-arrow', 'stub-has-body']);
    expect(compactProject({ cwd: root })).toEqual({ moved: ['C043'], timeline: [] });
    expect(doc(root, 'concept_registry.md')).toContain('## C043: TradeLogPanel (DEAD) → concept_graveyard.md#C043\n\n## C044');
    expect(doc(root, 'concept_graveyard.md')).toContain('## C043: TradeLogPanel (DEAD)\n- **Code:** `frontend/src/components/TradeLogPanel.tsx`');
    expect(lintProject({ cwd: root }).violations).toEqual([]);
  });
});
