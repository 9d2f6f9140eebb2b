import { describe, expect, it } from 'vitest';
import { extractJsonObject } from '../../../src/core/index.js';
import { thrown } from '../../_helpers.js';

describe('extractJsonObject', () => {
  it('reads bare JSON, a fenced block, or the outermost braces of a sentence', () => {
    expect(extractJsonObject('{"verdict":"helpful"}')).toEqual({ verdict: 'helpful' });
    expect(extractJsonObject('Here you go:\n```json\n{"lessons": []}\n```\nDone.')).toEqual({ lessons: [] });
    expect(extractJsonObject('Sure! {"a": {"b": 1}} Hope this helps.')).toEqual({ a: { b: 1 } });
  });

  it('throws LLM_FAILED when there is no object', () => {
    for (const text of ['no json here', '[1, 2]', '{broken', 'null']) {
      expect(thrown(() => extractJsonObject(text))?.code).toBe('LLM_FAILED');
    }
  });
});
