/**
 * The human gate is structural, not a flag: the code that approves, rejects, forgets and undoes (src/services/gate/)
 * is unreachable — through any chain of relative imports or re-exports — from the services barrel every surface
 * imports, from the MCP surface (src/mcp), from the catalog of operations it may ask for (src/services/ops), from the
 * hook handlers, and from the warm server whose socket dispatcher (src/server/main.ts) runs those operations for the
 * MCP process; and neither that socket's protocol nor the catalog has an operation that could carry an approval. The
 * CLI (a person at a terminal) does reach it, which also shows the graph walk finds what is there.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ServerRequestSchema } from '../../../src/server/protocol.js';
import * as gate from '../../../src/services/gate/index.js';
import { OPERATION_NAMES } from '../../../src/services/ops/index.js';
import * as services from '../../../src/services/index.js';
import { importsOf, pathInto, reachable, sourceFiles } from '../../_import-graph.js';
import { ROOT, tempDir } from '../../_helpers.js';

const SRC = join(ROOT, 'src');
const GATE = join(SRC, 'services', 'gate');
const MCP = join(SRC, 'mcp');
const OPS = join(SRC, 'services', 'ops');
const SERVER = join(SRC, 'server');
const forbidden = /approv|promot|reject|forget|undo|retire|\bgate/i;
const show = (path: string[] | null): string => (path ? path.map((file) => relative(ROOT, file)).join(' → ') : 'unreachable');

describe('the import graph utility', () => {
  it('follows every import form, transitively, and ignores packages', () => {
    const dir = tempDir('engram-graph-');
    mkdirSync(join(dir, 'lib'));
    writeFileSync(
      join(dir, 'entry.ts'),
      [
        "import { a } from './a.js';",
        "import type { T } from './types.js';",
        "export * from './lib/index.js';",
        'export {',
        '  b,',
        "} from './b.js';",
        "import './side.js';",
        "const lazy = () => import('./lazy.js');",
        "// import { nope } from './commented.js';",
        "const text = \"import { nope } from './in-string.js'\";",
        "import * as z from 'zod';",
        "import { join } from 'node:path';",
      ].join('\n'),
    );
    for (const name of ['a', 'types', 'b', 'side', 'lazy', 'commented', 'in-string']) writeFileSync(join(dir, `${name}.ts`), 'export const a = 1;\n');
    writeFileSync(join(dir, 'lib', 'index.ts'), "export { deep } from './deep.js';\n");
    writeFileSync(join(dir, 'lib', 'deep.ts'), 'export const deep = 1;\n');
    const found = [...reachable([join(dir, 'entry.ts')]).keys()].map((file) => relative(dir, file)).sort();
    expect(found).toEqual(['a.ts', 'b.ts', 'entry.ts', 'lazy.ts', 'lib/deep.ts', 'lib/index.ts', 'side.ts', 'types.ts']);
    expect(pathInto([join(dir, 'entry.ts')], join(dir, 'lib'))?.map((file) => relative(dir, file))).toEqual(['entry.ts', 'lib/index.ts']);
    expect(pathInto([join(dir, 'entry.ts')], join(dir, 'commented.ts'))).toBeNull();
  });

  it('resolves every relative import in src/ (a typo would hide an edge)', () => {
    const broken = sourceFiles(SRC).flatMap((file) => importsOf(file).unresolved.map((specifier) => `${relative(ROOT, file)}: ${specifier}`));
    expect(broken).toEqual([]);
  });
});

describe('the human gate (src/services/gate) is structurally out of reach', () => {
  it('is not reachable from src/services/index.ts, the barrel every surface imports', () => {
    expect(show(pathInto([join(SRC, 'services', 'index.ts')], GATE))).toBe('unreachable');
  });

  it('exports nothing the services barrel exports: no gate function is reachable by name', () => {
    const gateNames = Object.keys(gate);
    expect(gateNames.sort()).toEqual(['approveEngrams', 'forgetEngrams', 'rejectEngrams', 'undoOperation']);
    expect(gateNames.filter((name) => name in services)).toEqual([]);
  });

  it('is not reachable from any file under src/mcp (the MCP surface) or src/services/ops (the operations it asks for)', () => {
    // The folders must hold the code this test guards: moved elsewhere, the test would pass on nothing.
    expect(sourceFiles(MCP).map((file) => relative(MCP, file))).toEqual(expect.arrayContaining(['main.ts', 'server.ts', 'tools.ts', 'resources.ts', 'inprocess.ts', 'client.ts']));
    expect(sourceFiles(OPS).map((file) => relative(OPS, file))).toEqual(expect.arrayContaining(['index.ts', 'catalog.ts', 'caller.ts']));
    for (const file of [...sourceFiles(MCP), ...sourceFiles(OPS)]) expect(show(pathInto([file], GATE)), relative(ROOT, file)).toBe('unreachable');
  });

  it('is not reachable from the warm server (its socket dispatcher and protocol) or the hook handlers', () => {
    expect(sourceFiles(SERVER).map((file) => relative(SERVER, file))).toEqual(expect.arrayContaining(['main.ts', 'protocol.ts']));
    // The warm server also hosts the viewer (src/ui), a person's page behind a per-launch secret, whose Review
    // screen approves and undoes: the only way from the server into the gate is through that surface.
    const VIEWER = join(SRC, 'ui');
    for (const file of [...sourceFiles(SERVER), ...sourceFiles(join(SRC, 'hooks'))]) {
      expect(show(pathInto([file], GATE, [VIEWER])), relative(ROOT, file)).toBe('unreachable');
    }
    for (const file of [join(SRC, 'server', 'protocol.ts'), join(SRC, 'server', 'client.ts'), join(SRC, 'server', 'call.ts'), ...sourceFiles(join(SRC, 'hooks'))]) {
      expect(show(pathInto([file], VIEWER)), relative(ROOT, file)).toBe('unreachable');
    }
    expect(pathInto([join(SRC, 'server', 'main.ts')], GATE)?.map((file) => relative(SRC, file))).toContain('ui/api.ts');
  });

  it('is reachable from the CLI, where a person decides', () => {
    expect(pathInto([join(SRC, 'cli', 'main.ts')], GATE)).not.toBeNull();
  });
});

describe("the warm server's socket protocol and the operations it runs", () => {
  it('the catalog has no operation that could approve, reject, forget or undo', () => {
    expect(OPERATION_NAMES.length).toBeGreaterThan(20);
    expect(OPERATION_NAMES.filter((name) => forbidden.test(name) || Object.keys(gate).includes(name))).toEqual([]);
  });

  it('has no operation that could carry an approval, rejection, forget or undo', () => {
    const ops = ServerRequestSchema.options.map((option) => option.shape.op.value as string);
    expect(ops.filter((op) => forbidden.test(op))).toEqual([]);
    // Every fixed value anywhere in a request (op names, and any enum of service operations added later).
    const constants: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'const' && typeof value === 'string') constants.push(value);
          else if (key === 'enum' && Array.isArray(value)) constants.push(...value.filter((item): item is string => typeof item === 'string'));
          else walk(value);
        }
      }
    };
    walk(z.toJSONSchema(ServerRequestSchema));
    expect(constants).toContain('hook');
    expect(constants.filter((value) => forbidden.test(value) || Object.keys(gate).includes(value))).toEqual([]);
    for (const op of ['approve', 'reject', 'forget', 'undo', 'promote', ...Object.keys(gate)]) {
      expect(ServerRequestSchema.safeParse({ v: 1, op, ids: [1] }).success, op).toBe(false);
    }
  });
});
