import { EngramError } from '../errors.js';

/**
 * The JSON object in an LLM answer. Endpoints asked for `json_object` return bare JSON, but commands and small
 * models wrap it in a ```json fence or a sentence; this takes the outermost `{…}`. Throws LLM_FAILED when there is
 * no object, so callers treat it like any failed call (their fallback), not as a bug.
 */
export function extractJsonObject(text: string): Record<string, unknown> {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(text)?.[1];
  const candidates = [text.trim(), fenced?.trim(), outermostBraces(text)].filter((candidate): candidate is string => Boolean(candidate));
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Try the next reading.
    }
  }
  throw new EngramError('LLM_FAILED', 'the LLM answer holds no JSON object', { details: { chars: text.length } });
}

function outermostBraces(text: string): string | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : undefined;
}
