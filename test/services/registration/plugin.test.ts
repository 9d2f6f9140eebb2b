import { describe, expect, it } from 'vitest';
import { hookCommand, HOOK_NODE_OPTIONS } from '../../../scripts/hook-registry.mjs';
import { commandRoot, isEngramCommand } from '../../../src/services/registration/plugin.js';

describe('hook commands', () => {
  it('start node with one V8 worker thread, before the launcher', () => {
    // A hook runs for a few ms on one thread: V8's default 4 workers cost it their start-up and exit (PERFORMANCE.md §6).
    expect(HOOK_NODE_OPTIONS).toContain('--v8-pool-size=1');
    expect(hookCommand('/opt/engram', 'pre-tool-use', 'claude')).toBe('node --v8-pool-size=1 "/opt/engram/hooks/run.cjs" pre-tool-use --agent claude');
  });

  it("name their install folder with or without node options (settings written before the options were added)", () => {
    const current = hookCommand('/opt/engram', 'stop', 'codex');
    expect(isEngramCommand(current)).toBe(true);
    expect(commandRoot(current)).toBe('/opt/engram');
    expect(commandRoot('node "/old/engram/hooks/run.cjs" stop --agent claude')).toBe('/old/engram');
    expect(commandRoot('node --v8-pool-size=1 --max-old-space-size=64 /bare/engram/hooks/run.cjs stop --agent claude')).toBe('/bare/engram');
    expect(isEngramCommand('node "/old/engram/hooks/run.cjs" stop --agent claude')).toBe(true);
    // A plugin placeholder names no folder.
    expect(commandRoot(hookCommand('${CLAUDE_PLUGIN_ROOT}', 'stop', 'claude'))).toBeUndefined();
  });
});
