/**
 * The MCP surface reaches services only through services/ops (what an agent may ask for): the review gate that comes
 * later must be able to keep whatever promotes or approves engrams out of the agent's reach by not exporting it there.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../_helpers.js';

const MCP = join(ROOT, 'src', 'mcp');

describe('the MCP surface', () => {
  it('imports services only through services/ops, and no other surface but the server client', () => {
    const imports = readdirSync(MCP)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        [...readFileSync(join(MCP, name), 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/g)].map((match) => ({ name, from: match[1] as string })),
      );
    expect(imports.length).toBeGreaterThan(10);
    const local = imports.filter((entry) => entry.from.startsWith('.'));
    const outside = local.filter((entry) => !entry.from.startsWith('./'));
    expect(outside.filter((entry) => entry.from.includes('/services/')).map((entry) => entry.from).sort()).toEqual(
      expect.arrayContaining(['../services/ops/index.js']),
    );
    expect(outside.filter((entry) => entry.from.includes('/services/') && entry.from !== '../services/ops/index.js')).toEqual([]);
    expect(outside.filter((entry) => !/^\.\.\/(core\/index|services\/ops\/index|server\/(address|call|client|protocol))\.js$/.test(entry.from))).toEqual([]);
  });
});

describe('the MCP client', () => {
  it("knows which operations are local and which only read, as the catalog says", async () => {
    const { LOCAL, READS } = await import('../../src/mcp/client.js');
    const { OPERATIONS } = await import('../../src/services/ops/index.js');
    const entries = Object.entries(OPERATIONS) as Array<[string, { writes: boolean; local?: boolean }]>;
    expect([...LOCAL].sort()).toEqual(entries.filter(([, op]) => op.local).map(([name]) => name).sort());
    expect([...READS].sort()).toEqual(entries.filter(([, op]) => !op.writes).map(([name]) => name).sort());
  });
});
