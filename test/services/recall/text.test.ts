/** The BM25 analysis chain (services/recall/text.ts): its stems are kept between calls, and stay Porter's. */
import stem from 'wink-nlp-utils/src/string-stem.js';
import { describe, expect, it } from 'vitest';
import { searchTerms } from '../../../src/services/recall/text.js';

describe('searchTerms', () => {
  it('gives the stems of the stemmer itself, on the first call and the next, and past the number of stems it keeps', () => {
    const text = 'Running migrations requires the database; tests were failing because connections timed out in CI';
    const expected = ['run', 'migrat', 'requir', 'databas', 'test', 'fail', 'connect', 'time', 'ci'];
    expect(searchTerms(text)).toEqual(expected);
    expect(searchTerms(text)).toEqual(expected);
    // More distinct words than it keeps: it starts again, and the stems are still the stemmer's.
    const many = Array.from({ length: 50_100 }, (_, i) => `rebuilding${i.toString(36)}ings`);
    for (let i = 0; i < many.length; i += 1_000) {
      const chunk = many.slice(i, i + 1_000);
      expect(searchTerms(chunk.join(' '))).toEqual(chunk.map((word) => stem(word)));
    }
    expect(searchTerms(text)).toEqual(expected);
  });
});
