import { describe, expect, it } from 'vitest';
import { abstainReason, abstainVerdict } from '../../../src/services/index.js';

describe('abstainReason', () => {
  it.each([
    'yes',
    'ok do it',
    'OK, do it.',
    'thanks, go ahead',
    'sounds good',
    'lgtm',
    'yes please',
    'hmm wait',
    'Why?',
    'do that again',
    '[Request interrupted by user]',
    '[Request interrupted by user for tool use]',
    '<system-reminder>The user opened file x.ts</system-reminder>',
  ])('abstains on content-free %j', (query) => {
    expect(abstainReason(query)).toBe('no-content');
  });

  it.each(['', '   ', '\n\t'])('abstains on empty %j', (query) => {
    expect(abstainReason(query)).toBe('empty');
  });

  it.each([
    'run the tests',
    'why does the deploy fail?',
    'ok, now fix the flaky login test',
    'docker',
    'npm ci',
    'stop the container',
    'retry logic for the webhook',
    'do not push to main',
    '[Request interrupted by user] use pnpm instead',
  ])('searches %j', (query) => {
    expect(abstainReason(query)).toBeNull();
  });
});

describe('abstainVerdict', () => {
  // One feature, weight 1, intercept 0: the probability is σ(feature); the model answers from 0.5 up.
  const classifier = { intercept: 0, weights: [1], threshold: 0.5 };
  const terms = [
    { term: 'kubernet', weight: 3 },
    { term: 'docker', weight: 1 },
  ];
  const verdict = (feature: number, results = [{ id: 4, coverage: 0.25, matched: ['docker'] }]) =>
    abstainVerdict({ model: 'hybrid', classifier, featureNames: ['confidence'], features: [feature], terms, results, unseen: ['kubernet'] });

  it('answers when the classifier is confident enough and stays silent below its threshold, saying why', () => {
    expect(verdict(2).weak).toBeNull();
    const silent = verdict(-2);
    expect(silent.probability).toBeCloseTo(0.119, 3);
    expect(silent.weak).toMatch(/^confidence 0.119 that the first results answer the query, below the 0.5 it needs/);
    expect(silent.weak).toContain("the best match (#4) covers 25 % of the query's weight");
    expect(silent.weak).toContain('75 % of it is in words no memory holds (kubernet)');
  });

  it('reports the features with their weights, the best result and the rule for --explain', () => {
    const explained = verdict(1, [
      { id: 4, coverage: 0.25, matched: ['docker'] },
      { id: 9, coverage: 0.75, matched: ['kubernet'] },
    ]);
    expect(explained.best).toEqual({ id: 9, coverage: 0.75, matched: ['kubernet'] });
    expect(explained.features).toEqual([{ name: 'confidence', value: 1, weight: 1 }]);
    expect(explained.rule).toContain('hybrid abstain model');
    expect(explained.rule).toContain('0.5');
  });

  it('is silent with nothing matched', () => {
    expect(verdict(5, []).weak).toBe('nothing matched');
  });
});
