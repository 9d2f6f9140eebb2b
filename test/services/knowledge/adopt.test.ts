import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initProject, lintProject, projectStatus, readDocEntry } from '../../../src/services/index.js';
import { ROOT, tempDir } from '../../_helpers.js';

const V2 = join(ROOT, 'fixtures', 'knowledge', 'v2');

function v2Repository(): string {
  const root = tempDir('engram-adopt-');
  const dir = join(root, 'docs', 'decisions');
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(V2)) copyFileSync(join(V2, name), join(dir, name));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_DATE: '2026-01-02T10:00:00Z', GIT_COMMITTER_DATE: '2026-01-02T10:00:00Z' } });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'v2 docs');
  return root;
}

const noAgent = () => ({ describe: 'none', run: () => Promise.reject(new Error('adoption calls no model')) });

describe('engram docs init --adopt', () => {
  it('backfills ids in document order, extracts workflows, moves dead entries to graveyards and rewrites names to ids', async () => {
    const root = v2Repository();
    const env = { home: tempDir(), claudeConfigDir: tempDir(), codexHome: tempDir(), userHome: tempDir() };
    const report = await initProject({ cwd: root, mode: { path: 'adopt' }, agent: noAgent, env, now: () => new Date('2026-11-25T00:00:00Z') });
    expect(report.adopt!.assigned.map((a) => `${a.id} ${a.name}`)).toEqual([
      'C001 check_level_hits',
      'C002 proximity_pruning',
      'C003 structure_pruning',
      'W001 Review protocol',
      'E001 74% win rate',
      'E002 2x_pullback edge',
    ]);
    expect(report.adopt!.workflows.map((w) => w.id)).toEqual(['W001']);
    expect(report.adopt!.graveyarded).toEqual(['C002', 'E001']);
    expect(report.ids).toEqual({ C: 4, E: 3, W: 2 });
    expect(report.continuation_date).toBe('2026-01-02'); // the docs' last commit: where the v2 fold stopped

    const docs = (name: string) => readFileSync(join(root, 'docs', 'decisions', name), 'utf8');
    expect(docs('concept_registry.md')).toContain('## C002: proximity_pruning (DEAD) → concept_graveyard.md#C002\n\n## C003: structure_pruning (ACTIVE)');
    expect(docs('concept_registry.md')).toContain('- **Relationship:** degenerate case handled with proximity_pruning\'s replacement, C003 (structure_pruning)');
    expect(docs('concept_registry.md')).not.toContain('Review protocol');
    expect(docs('workflow_registry.md')).toContain('## W001: Review protocol (CURRENT)\n- **Context:** Review protocol (adopted from the concept registry)\n- **Current method:** Two reviewers');
    expect(docs('concept_graveyard.md')).toContain('## C002: proximity_pruning (DEAD)\n- **Code:** `pruning/proximity.py`\n- **Lesson:** Proximity alone was too aggressive\n- **Replaced by:** C003 (structure_pruning)');
    expect(docs('epistemic_state.md')).toContain('## E001: 74% win rate (refuted) → epistemic_graveyard.md#E001');
    expect(docs('epistemic_state.md')).toContain('**Related concepts:** C001 (check_level_hits)');
    expect(readFileSync(join(root, '.engram', 'fold', 'adopt-before', 'concepts.md'), 'utf8')).toBe(readFileSync(join(V2, 'concept_registry.md'), 'utf8'));

    expect(lintProject({ cwd: root }).violations).toEqual([]);
    expect(readDocEntry({ cwd: root }, 'c002')).toMatchObject({ id: 'C002', form: 'stub', authoritative_status: 'DEAD', graveyard: [{ correction: null }] });
    expect(projectStatus({ cwd: root })).toMatchObject({ continuation_date: '2026-01-02', ids: { next: { C: 'C004', E: 'E003', W: 'W002' } } });
  });
});
