import { describe, expect, it } from 'vitest';
import { contentHash, normalizeCategory, normalizePrerequisites, normalizeTags, normalizeTopicKey } from '../../src/core/index.js';

describe('engram normalisers', () => {
  it('normalise categories to lower-case slash paths', () => {
    expect(normalizeCategory('  Development / Front End ')).toBe('development/front-end');
    expect(normalizeCategory('')).toBe('general');
    expect(normalizeCategory(undefined)).toBe('general');
    expect(() => normalizeCategory('a/b/c/d/e/f')).toThrow('the limit is 5');
  });

  it('normalise tags: split on commas, lower-case, unique, sorted', () => {
    expect(normalizeTags(['React', 'repo:Shop', 'c++, node.js', 'react'])).toEqual(['c++', 'node.js', 'react', 'repo:shop']);
    expect(normalizeTags('a, ,b')).toEqual(['a', 'b']);
    expect(() => normalizeTags(Array.from({ length: 33 }, (_, i) => `t${i}`))).toThrow('the limit is 32');
  });

  it('normalise topic keys like the Go engram', () => {
    expect(normalizeTopicKey(' Architecture  Auth Model ')).toBe('architecture-auth-model');
    expect(normalizeTopicKey('   ')).toBeNull();
  });

  it('drop empty prerequisite lists and reject unknown keys', () => {
    expect(normalizePrerequisites({ os: [], repos: ['shop'] })).toEqual({ repos: ['shop'] });
    expect(normalizePrerequisites({ os: [] })).toBeNull();
    expect(() => normalizePrerequisites({ branch: ['main'] })).toThrow('allowed keys');
  });

  it('hash content ignoring case and whitespace', () => {
    expect(contentHash('Run  the\nLinter ')).toBe(contentHash('run the linter'));
    expect(contentHash('run the linter')).not.toBe(contentHash('run the linters'));
  });
});
