import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, loadSettingsLeniently, readEnv } from '../../src/core/index.js';
import { tempDir, thrown } from '../_helpers.js';

describe('readEnv', () => {
  it('defaults the home to ~/.engram and expands ~ in ENGRAM_HOME', () => {
    expect(readEnv({ HOME: '/home/u' }).home).toBe('/home/u/.engram');
    expect(readEnv({ HOME: '/home/u', ENGRAM_HOME: '~/data/eng' }).home).toBe('/home/u/data/eng');
    expect(readEnv({ HOME: '/home/u', ENGRAM_HOME: 'rel' }, { cwd: '/work' }).home).toBe('/work/rel');
  });

  it('finds the agents’ folders and tells Codex hooks from Claude Code hooks', () => {
    const claude = readEnv({ HOME: '/h', CLAUDE_PROJECT_DIR: '/p', CLAUDE_PLUGIN_ROOT: '/plug' });
    expect(claude).toMatchObject({ claudeHookEnv: true, codexHookEnv: false, pluginRoot: '/plug', claudeConfigDir: '/h/.claude' });
    const codex = readEnv({ HOME: '/h', PLUGIN_ROOT: '/cx', CODEX_HOME: '/h/cx' });
    expect(codex).toMatchObject({ claudeHookEnv: false, codexHookEnv: true, pluginRoot: '/cx', codexHome: '/h/cx' });
  });

  it('ignores an unknown log level rather than failing', () => {
    expect(readEnv({ HOME: '/h', ENGRAM_LOG_LEVEL: 'loud' }).logLevel).toBeUndefined();
    expect(readEnv({ HOME: '/h', ENGRAM_LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
  });
});

describe('loadSettings', () => {
  const homeWith = (config?: string): string => {
    const home = tempDir();
    if (config !== undefined) writeFileSync(join(home, 'config.json'), config);
    return home;
  };

  it('uses defaults when there is no config.json', () => {
    const settings = loadSettings(readEnv({ HOME: '/h', ENGRAM_HOME: homeWith() }));
    expect(settings.configSource).toBe('defaults');
    expect(settings.config).toEqual({
      capture: { prompts: true },
      log: { level: 'info', max_bytes: 5 * 1024 * 1024 },
      store: { busy_timeout_ms: 10_000 },
      hooks: { busy_timeout_ms: 1_500, session_start_chars: 3_000, prompt_chars: 2_000, tool_chars: 1_200, session_chars: 24_000 },
      tapes: { record: true },
      server: { enabled: true, idle_minutes: 15 },
      http: { enabled: true, host: '127.0.0.1', port: 7437, allow_remote: false, timeout_ms: 30_000, token_env: 'ENGRAM_HTTP_TOKEN' },
      sync: { prompts: false },
      embed: { provider: 'auto' },
      search: {},
      tags: { builtin: true, path_patterns: [], remote_patterns: [], file_markers: {}, dependency_tags: {}, dir_patterns: {} },
      governance: { autopromote: false, tiers: {}, decay: {}, conflict_llm: 'auto', context_chars: 4_000 },
      llm: {
        provider: 'auto',
        api_key_env: 'ENGRAM_LLM_API_KEY',
        timeout_ms: 60_000,
        max_retries: 2,
        max_calls_per_session: 20,
        max_tokens_per_session: 100_000,
        max_calls_per_day: 200,
        max_tokens_per_day: 400_000,
        max_prompt_chars: 24_000,
      },
    });
  });

  it('lets ENGRAM_EMBEDDER, ENGRAM_MODEL and ENGRAM_MODEL_DIR override config.json', () => {
    const home = homeWith('{"embed": {"provider": "use-lite", "model": "a/b", "model_dir": "/models"}, "search": {"rrf_k": 30}}');
    expect(loadSettings(readEnv({ HOME: '/h', ENGRAM_HOME: home })).config.embed).toEqual({ provider: 'use-lite', model: 'a/b', model_dir: '/models' });
    const overridden = loadSettings(
      readEnv({ HOME: '/h', ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'Transformers', ENGRAM_MODEL: 'c/d', ENGRAM_MODEL_DIR: '/other' }),
    );
    expect(overridden.config.embed).toEqual({ provider: 'transformers', model: 'c/d', model_dir: '/other' });
    expect(overridden.config.search.rrf_k).toBe(30);
  });

  it('merges a partial config.json over the defaults, and the environment over both', () => {
    const home = homeWith('{"capture": {"prompts": false}, "log": {"level": "warn"}}');
    const settings = loadSettings(readEnv({ HOME: '/h', ENGRAM_HOME: home, ENGRAM_LOG_LEVEL: 'error' }));
    expect(settings.config.capture.prompts).toBe(false);
    expect(settings.config.log).toEqual({ level: 'error', max_bytes: 5 * 1024 * 1024 });
    expect(settings.configSource).toBe('file');
  });

  it.each([
    ['broken JSON', '{"log": ', 'is not valid JSON'],
    ['an unknown key', '{"captrue": {}}', 'Unrecognized key'],
    ['a wrong type', '{"hooks": {"busy_timeout_ms": "fast"}}', 'hooks.busy_timeout_ms'],
  ])('rejects %s with CONFIG_INVALID naming the problem', (_name, text, message) => {
    const home = homeWith(text);
    const error = thrown(() => loadSettings(readEnv({ HOME: '/h', ENGRAM_HOME: home })));
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain(join(home, 'config.json'));
    expect(error?.message).toContain(message);
  });

  it('falls back to defaults and returns the error when asked to be lenient (hooks)', () => {
    const home = homeWith('not json');
    const { settings, configError } = loadSettingsLeniently(readEnv({ HOME: '/h', ENGRAM_HOME: home }));
    expect(settings.config.hooks.busy_timeout_ms).toBe(1_500);
    expect(configError?.code).toBe('CONFIG_INVALID');
  });
});
