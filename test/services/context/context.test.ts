/**
 * Context files: the marked block of reviewed memories in AGENTS.md / CLAUDE.md, written atomically and only between
 * its markers, opted in per repository, refused (file untouched) when the markers are unbalanced or the block was
 * edited by hand, undone exactly; the same text as the MCP `memory://recall` resource.
 */
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src/core/index.js';
import { addEngram, disableContext, recallContextText, syncContext } from '../../../src/services/index.js';
import { undoOperation } from '../../../src/services/gate/index.js';
import { tempDir, thrown } from '../../_helpers.js';

function setup() {
  const root = join(tempDir('engram-ctx-'), 'shop');
  mkdirSync(join(root, '.git'), { recursive: true });
  const home = tempDir('engram-home-');
  const store = openStore({ path: join(home, 'engram.db') });
  addEngram(store, { text: 'Run the integration tests with --runInBand.', project: 'shop' });
  addEngram(store, { text: 'Prefer git switch over git checkout.', pinned: true });
  addEngram(store, { text: 'Blog posts are written in MDX.', project: 'blog' });
  addEngram(store, { text: 'Waiting for review: use vitest.', project: 'shop' }, { actor: { by: 'agent', via: 'mcp' } });
  return { root, home, store };
}

const AGENTS = '# Agents\n\nBuild with `npm run build`.\n';

describe('engram context sync', () => {
  it('writes the block after the file’s own text, and touches nothing outside the markers on later syncs', () => {
    const { root, home, store } = setup();
    writeFileSync(join(root, 'AGENTS.md'), AGENTS);
    const report = syncContext(store, { home, cwd: root, files: ['AGENTS.md'] });
    expect(report).toMatchObject({ root, project: 'shop', files: [{ file: 'AGENTS.md', status: 'written', ids: [2, 1] }] });
    const text = readFileSync(join(root, 'AGENTS.md'), 'utf8');
    expect(text.startsWith(`${AGENTS}\n<!-- engram:begin hash=`)).toBe(true);
    expect(text).toContain('- Prefer git switch over git checkout. (EG#2)\n- Run the integration tests with --runInBand. (EG#1)\n<!-- engram:end -->\n');
    expect(text).not.toContain('MDX'); // another project's
    expect(text).not.toContain('vitest'); // not reviewed yet

    // The person edits outside the block; a later sync keeps that and rewrites only the block.
    writeFileSync(join(root, 'AGENTS.md'), `Intro line.\n${text}\n## After\nMore notes.\n`);
    addEngram(store, { text: 'The API client timeout is 30s.', project: 'shop' });
    const again = syncContext(store, { home, cwd: root }); // the opt-in remembered the file
    expect(again.files).toEqual([expect.objectContaining({ file: 'AGENTS.md', status: 'written' })]);
    const after = readFileSync(join(root, 'AGENTS.md'), 'utf8');
    expect(after.startsWith(`Intro line.\n${AGENTS}\n<!-- engram:begin`)).toBe(true);
    expect(after.endsWith('<!-- engram:end -->\n\n## After\nMore notes.\n')).toBe(true);
    expect(after).toContain('The API client timeout is 30s.');
    expect(syncContext(store, { home, cwd: root }).files[0]?.status).toBe('unchanged');
    expect(readdirSync(root).filter((name) => name.includes('.tmp'))).toEqual([]);
    store.close();
  });

  it('refuses unbalanced markers and a hand-edited block, leaving the file byte for byte as it was', () => {
    const { root, home, store } = setup();
    const path = join(root, 'CLAUDE.md');
    const cases = [
      `${AGENTS}<!-- engram:begin hash=0123456789abcdef -->\n- x\n`,
      `${AGENTS}<!-- engram:end -->\n`,
      `${AGENTS}<!-- engram:begin hash=0123456789abcdef -->\n<!-- engram:begin hash=0123456789abcdef -->\n<!-- engram:end -->\n`,
      `${AGENTS}<!-- engram:end -->\n<!-- engram:begin hash=0123456789abcdef -->\n`,
      `${AGENTS}<!-- engram:begin -->\n- x\n<!-- engram:end -->\n`,
    ];
    for (const content of cases) {
      writeFileSync(path, content);
      const mtime = statSync(path).mtimeMs;
      const error = thrown(() => syncContext(store, { home, cwd: root, files: ['CLAUDE.md'] }));
      expect(error?.code).toBe('INVALID_INPUT');
      expect(error?.message).toMatch(/unbalanced engram markers|comes before the begin marker|edited by hand/);
      expect(error?.message).toContain('the file was left as it was');
      expect(readFileSync(path, 'utf8')).toBe(content);
      expect(statSync(path).mtimeMs).toBe(mtime);
    }
    writeFileSync(path, AGENTS);
    syncContext(store, { home, cwd: root, files: ['CLAUDE.md'] });
    const synced = readFileSync(path, 'utf8');
    const edited = synced.replace('--runInBand', '--runInBand (and never on Fridays)');
    writeFileSync(path, edited);
    expect(thrown(() => syncContext(store, { home, cwd: root }))?.message).toMatch(/^the engram block in CLAUDE.md \(lines 5–12\) was edited by hand/);
    expect(readFileSync(path, 'utf8')).toBe(edited);
    store.close();
  });

  it('checks every file before writing any; refuses a file outside the repository; needs an opt-in', () => {
    const { root, home, store } = setup();
    writeFileSync(join(root, 'CLAUDE.md'), '<!-- engram:end -->\n');
    expect(thrown(() => syncContext(store, { home, cwd: root, files: ['AGENTS.md', 'CLAUDE.md'] }))?.code).toBe('INVALID_INPUT');
    expect(readdirSync(root).sort()).toEqual(['.git', 'CLAUDE.md']); // AGENTS.md was not created
    expect(thrown(() => syncContext(store, { home, cwd: root, files: ['../elsewhere.md'] }))?.message).toContain('is not inside the repository');
    expect(thrown(() => syncContext(store, { home, cwd: root }))?.message).toContain('no context file is enabled');
    store.close();
  });

  it('is undone exactly, and switched off with or without taking the block out', () => {
    const { root, home, store } = setup();
    writeFileSync(join(root, 'AGENTS.md'), AGENTS);
    const first = syncContext(store, { home, cwd: root, files: ['AGENTS.md'] });
    const once = readFileSync(join(root, 'AGENTS.md'), 'utf8');
    addEngram(store, { text: 'The API client timeout is 30s.', project: 'shop' });
    const second = syncContext(store, { home, cwd: root });
    undoOperation(store, second.files[0]?.undo_token as string);
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe(once);
    undoOperation(store, first.files[0]?.undo_token as string);
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe(AGENTS);
    syncContext(store, { home, cwd: root, files: ['AGENTS.md'] });
    expect(disableContext(store, { home, cwd: root, removeBlock: true })).toMatchObject({ disabled: ['AGENTS.md'], removed: ['AGENTS.md'] });
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe(AGENTS);
    expect(thrown(() => syncContext(store, { home, cwd: root }))?.message).toContain('no context file is enabled');
    store.close();
  });

  it('--project-only leaves personal engrams out; the budget drops what does not fit; the recall text is the same', () => {
    const { root, home, store } = setup();
    const text = recallContextText(store, { project: 'shop', projectOnly: true });
    expect(text.ids).toEqual([1]);
    const small = recallContextText(store, { project: 'shop', budget: 220 });
    expect(small).toMatchObject({ ids: [2], dropped: [1] });
    expect(small.text.length).toBeLessThanOrEqual(220);
    syncContext(store, { home, cwd: root, files: ['AGENTS.md'] });
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toContain(recallContextText(store, { project: 'shop' }).text);
    store.close();
  });
});
