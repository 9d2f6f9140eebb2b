import { detectFormat, EngramError } from '../../../core/index.js';
import type { Harness } from '../events.js';
import { adaptClaude, CLAUDE_ADAPTER_VERSION, CLAUDE_VERSIONS } from './claude.js';
import { adaptCodex, CODEX_ADAPTER_VERSION, CODEX_VERSIONS } from './codex.js';
import { splitLines, type AdapterOptions, type AdapterResult, type VersionMatrix } from './common.js';

export { adaptClaude, stripLineNumbers } from './claude.js';
export { adaptCodex, parseCodexOutput, parsePatch, findPatchText } from './codex.js';
export { tapePath, hunkRegion, unifiedDiffHunks, replayEdits, versionSupported, parseVersion, sha256 } from './common.js';
export type { AdapterOptions, AdapterResult, VersionMatrix, EditRegion } from './common.js';

/** Every adapter with its version and supported-version matrix (for `engram doctor`-style reports and docs). */
export const ADAPTERS: Record<Harness, { version: number; versions: VersionMatrix; adapt: (text: string, options?: AdapterOptions) => AdapterResult }> = {
  claude: { version: CLAUDE_ADAPTER_VERSION, versions: CLAUDE_VERSIONS, adapt: adaptClaude },
  codex: { version: CODEX_ADAPTER_VERSION, versions: CODEX_VERSIONS, adapt: adaptCodex },
};

/** Which agent wrote a transcript (core's detector: Codex lines are `{type, payload}` envelopes). */
export function detectHarness(text: string): Harness | null {
  return detectFormat(splitLines(text).slice(0, 50));
}

/**
 * Transcript text → tape events, with the harness given or detected. INVALID_INPUT when the text is neither format
 * (no line an adapter recognises).
 */
export function adaptTranscript(text: string, options: AdapterOptions & { harness?: Harness } = {}): AdapterResult {
  const harness = options.harness ?? detectHarness(text);
  if (harness === null) {
    throw new EngramError('INVALID_INPUT', 'not a Claude Code or Codex transcript: no line has the shape of either format', {
      details: { lines: splitLines(text).length },
    });
  }
  return ADAPTERS[harness].adapt(text, options);
}
