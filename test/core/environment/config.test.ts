import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, readEnv, type EngramError } from '../../../src/core/index.js';
import { world, write } from './_fixture.js';

/** Loads settings from a config.json holding `{tags: section}`; returns the settings or the error thrown. */
function load(section: unknown): { tags?: unknown; error?: EngramError; file: string } {
  const { root } = world();
  const file = write(join(root, 'config.json'), JSON.stringify({ tags: section }));
  try {
    return { tags: loadSettings(readEnv({ HOME: root, ENGRAM_HOME: root })).config.tags, file };
  } catch (error) {
    return { error: error as EngramError, file };
  }
}

describe('config.json tags section', () => {
  it('defaults to the built-in rules and no user rules', () => {
    expect(load({}).tags).toEqual({ builtin: true, path_patterns: [], remote_patterns: [], file_markers: {}, dependency_tags: {}, dir_patterns: {} });
  });

  it('accepts every kind of rule', () => {
    const section = {
      builtin: false,
      path_patterns: [{ pattern: '/work/acme/', tags: ['acme'] }],
      remote_patterns: [{ pattern: 'github\\.com[:/]acme/', tags: ['acme', 'github'] }],
      file_markers: { 'deploy/*.yaml': ['deploy'], 'Tiltfile': ['tilt'] },
      dependency_tags: { '@acme/*': ['acme'] },
      dir_patterns: { 'services/': ['microservices'] },
    };
    expect(load(section).tags).toEqual(section);
  });

  it.each([
    [{ path_patterns: [{ pattern: '([a-z', tags: ['x'] }] }, 'tags.path_patterns.0.pattern: not a valid JavaScript regular expression'],
    [{ remote_patterns: [{ pattern: 'ok', tags: ['x'] }, { pattern: '*acme', tags: ['x'] }] }, 'tags.remote_patterns.1.pattern: not a valid'],
    [{ path_patterns: [{ pattern: 'x', tags: [] }] }, 'tags.path_patterns.0.tags'],
    [{ file_markers: { Gemfile: ['-ruby'] } }, "tags.file_markers.Gemfile: tag '-ruby' may only contain"],
    [{ file_markers: { '../secrets': ['x'] } }, 'tags.file_markers.../secrets: key must be a relative path of one or two segments'],
    [{ dir_patterns: { 'a/b/c/': ['deep'] } }, 'tags.dir_patterns.a/b/c/: key must be a relative path'],
    [{ dependency_tags: { ' ': ['x'] } }, 'tags.dependency_tags. : key must be a package name'],
    [{ builtins: false }, 'tags: Unrecognized key'],
  ])('rejects %j as CONFIG_INVALID naming the path', (section, message) => {
    const { error, file } = load(section);
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain(file);
    expect(error?.message).toContain(message);
  });
});
