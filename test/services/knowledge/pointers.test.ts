import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KnowledgeConfigSchema } from '../../../src/services/knowledge/config.js';
import { parseDoc } from '../../../src/services/knowledge/parse.js';
import { checkPointers, parsePointers } from '../../../src/services/knowledge/pointers.js';
import { tempDir } from '../../_helpers.js';

describe('parsePointers', () => {
  it('tells files from symbols, with lines and file::symbol pairs', () => {
    expect(parsePointers('`SignalDetector.check_level_hits()`, `level_tracking.py`').map((p) => [p.kind, p.path ?? p.symbol])).toEqual([
      ['symbol', 'check_level_hits'],
      ['file', 'level_tracking.py'],
    ]);
    expect(parsePointers('`src/a.ts:10-20`, `lib/b.py::Parser.parse`')).toMatchObject([
      { kind: 'file', path: 'src/a.ts', lines: { start: 10, end: 20 } },
      { kind: 'file', path: 'lib/b.py' },
      { kind: 'symbol', path: 'lib/b.py', symbol: 'parse' },
    ]);
    expect(parsePointers('None')).toEqual([]);
  });
});

describe('checkPointers', () => {
  it('finds files anywhere and symbols outside the docs; a deleted file makes its concept an orphan', () => {
    const root = tempDir();
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, stdio: 'ignore' });
    git('init', '-q');
    mkdirSync(join(root, 'src', 'deep'), { recursive: true });
    mkdirSync(join(root, 'docs', 'decisions'), { recursive: true });
    writeFileSync(join(root, 'src', 'deep', 'level_tracking.py'), 'def check_level_hits(bar):\n    return bar\n');
    writeFileSync(join(root, 'src', 'gone.py'), 'x = 1\n');
    const registry = `# Concepts

## C001: levels (ACTIVE)
- **Code:** \`SignalDetector.check_level_hits()\`, \`level_tracking.py\`

## C002: gone (ACTIVE)
- **Code:** \`src/gone.py\`

## C003: imaginary (ACTIVE)
- **Code:** \`phantom_function()\`
`;
    // The registry itself mentions phantom_function: that must not count as the code existing.
    writeFileSync(join(root, 'docs', 'decisions', 'concept_registry.md'), registry);
    git('add', '-A');
    git('commit', '-qm', 'x');
    rmSync(join(root, 'src', 'gone.py'));
    const config = KnowledgeConfigSchema.parse({});
    const result = checkPointers(root, config, parseDoc('concepts', 'docs/decisions/concept_registry.md', registry));
    expect(result.map((c) => [c.id, c.orphan, c.pointers.map((p) => p.found)])).toEqual([
      ['C001', false, [true, true]],
      ['C002', true, [false]],
      ['C003', true, [false]],
    ]);
    expect(result[0]!.pointers[0]!.locations[0]).toEqual({ file: 'src/deep/level_tracking.py', line: 1 });
    expect(result[0]!.pointers[1]!.locations[0]).toEqual({ file: 'src/deep/level_tracking.py', line: 1 });
  });
});
