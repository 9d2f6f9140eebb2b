import { createLlmClient, type Logger, type Settings, type Store } from '../../core/index.js';
import type { KnowledgeConfig } from './config.js';

/** The fold agent: an agent CLI that edits the docs with its own file tools (seed 002, "The Fold Agent Contract"). */
export interface FoldAgent {
  /** The command, for status output (`claude -p --model sonnet …`). */
  readonly describe: string;
  /** Runs the agent once in `cwd` with `prompt` on stdin; resolves with what it printed, throws EngramError (LLM_FAILED on timeout or exit ≠ 0). */
  run(request: { prompt: string; cwd: string; signal?: AbortSignal; onSpawn?: (pid: number) => void; purpose: string }): Promise<{ text: string; ms: number }>;
}

/** The fold command's argv with `{model}` filled in. */
export const foldArgv = (config: KnowledgeConfig): string[] => config.fold.command.map((part) => part.replaceAll('{model}', config.model));

/**
 * The fold agent through Engram's one LLM client in command mode (docs/LLM.md): no shell, its own process group
 * killed on timeout or abort, `ENGRAM_LLM_CHILD=1` so Engram's hooks in the agent's session stay silent, and each
 * dispatch counted against the LLM caps in the Engram home's store. The command and the timeout come from
 * `.engram/config.yaml` (`fold.command`, `fold.timeout_minutes`); the caps from config.json.
 */
export function createFoldAgent(settings: Settings, config: KnowledgeConfig, options: { store?: Store; log?: Logger } = {}): FoldAgent {
  const argv = foldArgv(config);
  const client = createLlmClient(
    {
      ...settings,
      config: {
        ...settings.config,
        llm: { ...settings.config.llm, provider: 'command', command: argv, model: config.model, timeout_ms: Math.round(config.fold.timeout_minutes * 60_000) },
      },
    },
    { ...(options.store ? { store: options.store } : {}), ...(options.log ? { log: options.log } : {}) },
  );
  return {
    describe: argv.join(' '),
    async run(request) {
      const answer = await client.complete({
        prompt: request.prompt,
        purpose: request.purpose,
        cwd: request.cwd,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.onSpawn ? { onSpawn: request.onSpawn } : {}),
      });
      return { text: answer.text, ms: answer.ms };
    },
  };
}
