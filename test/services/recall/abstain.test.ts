import { describe, expect, it } from 'vitest';
import { abstainReason } from '../../../src/services/index.js';

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
