import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hookCommand, HOOK_NODE_OPTIONS, nodeHookCommand } from '../../../scripts/hook-registry.mjs';
import { ROOT } from '../../_helpers.js';
import { commandRoot, isEngramCommand } from '../../../src/services/registration/plugin.js';

describe('hook commands', () => {
  it('run the shell front, which starts node with one V8 worker thread, before the launcher', () => {
    expect(hookCommand('/opt/engram', 'pre-tool-use', 'claude')).toBe('sh "/opt/engram/hooks/run.sh" pre-tool-use --agent claude');
    // A hook runs for a few ms on one thread: V8's default 4 workers cost it their start-up and exit (PERFORMANCE.md §6).
    expect(HOOK_NODE_OPTIONS).toContain('--v8-pool-size=1');
    expect(nodeHookCommand('/opt/engram', 'pre-tool-use', 'claude')).toBe('node --v8-pool-size=1 "/opt/engram/hooks/run.cjs" pre-tool-use --agent claude');
    // Every way hooks/run.sh hands a hook to the Node launcher uses the same options.
    const starts = readFileSync(join(ROOT, 'hooks', 'run.sh'), 'utf8').match(/exec node [^\n]*/g) ?? [];
    expect(starts.length).toBeGreaterThan(5);
    for (const start of starts) expect(start.startsWith(`exec node ${HOOK_NODE_OPTIONS.join(' ')} "$node_launcher" "$@"`)).toBe(true);
  });

  it("name their install folder with or without node options (settings written before the options were added)", () => {
    const current = hookCommand('/opt/engram', 'stop', 'codex');
    expect(isEngramCommand(current)).toBe(true);
    expect(commandRoot(current)).toBe('/opt/engram');
    expect(commandRoot('node "/old/engram/hooks/run.cjs" stop --agent claude')).toBe('/old/engram');
    expect(commandRoot('node --v8-pool-size=1 --max-old-space-size=64 /bare/engram/hooks/run.cjs stop --agent claude')).toBe('/bare/engram');
    expect(isEngramCommand('node "/old/engram/hooks/run.cjs" stop --agent claude')).toBe(true);
    expect(commandRoot(nodeHookCommand('/node/engram', 'stop', 'claude'))).toBe('/node/engram');
    expect(isEngramCommand(nodeHookCommand('/node/engram', 'stop', 'claude'))).toBe(true);
    // A plugin placeholder names no folder.
    expect(commandRoot(hookCommand('${CLAUDE_PLUGIN_ROOT}', 'stop', 'claude'))).toBeUndefined();
  });
});
