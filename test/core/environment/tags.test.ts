import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRepo, rules, world, write } from './_fixture.js';

const packageJson = (sections: Record<string, Record<string, string>>): string => JSON.stringify({ name: 'x', ...sections });

describe('tag detection', () => {
  it('A: tags the cwd by the path patterns in config.json', () => {
    const w = world();
    const found = w.detect({ rules: rules({ path_patterns: [{ pattern: '/work/shop$', tags: ['Shop Team'] }, { pattern: '/nowhere/', tags: ['x'] }] }) });
    expect(found.tags).toEqual(['shop-team']);
    expect(found.reasons['shop-team']).toEqual(['path pattern /work/shop$']);
  });

  it('B: tags by remote host (built in) and by owner (config), case-insensitively for hosts only', () => {
    const w = world();
    gitRepo(w.project, { origin: 'git@GitHub.com:acme/shop.git', mirror: 'https://gitlab.example.org/acme/shop.git' });
    const found = w.detect({ rules: rules({ remote_patterns: [{ pattern: 'github\\.com[:/]acme/', tags: ['acme'] }] }) });
    expect(found.tags).toEqual(['github', 'gitlab']);
    const lower = world();
    gitRepo(lower.project, { origin: 'git@github.com:acme/shop.git' });
    const owner = lower.detect({ rules: rules({ remote_patterns: [{ pattern: 'github\\.com[:/]acme/', tags: ['acme'] }] }) });
    expect(owner.tags).toEqual(['acme', 'github']);
    expect(owner.reasons).toEqual({ acme: ['remote pattern github\\.com[:/]acme/'], github: ['remote pattern github\\.com'] });
  });

  it('C: finds file markers at the repository root and the cwd, with wildcards and one level down', () => {
    const w = world();
    gitRepo(w.project);
    write(join(w.project, 'tsconfig.json'), '{}');
    write(join(w.project, 'jest.config.cjs'), '');
    write(join(w.project, '.github', 'workflows', 'ci.yml'), '');
    write(join(w.project, 'api', 'Gemfile'), '');
    write(join(w.project, 'api', 'deep', 'go.mod'), ''); // below the cwd: never looked at
    const found = w.detect({ cwd: join(w.project, 'api') });
    expect(found.repo).toBe('shop');
    expect(found.tags).toEqual(['github-actions', 'jest', 'ruby', 'typescript']);
    expect(found.reasons).toMatchObject({
      typescript: ['file marker tsconfig.json'],
      jest: ['file marker jest.config.cjs'],
      'github-actions': ['file marker .github/workflows'],
      ruby: ['file marker api/Gemfile'],
    });
  });

  it('D: maps dependencies, devDependencies and peerDependencies to tags, including scope wildcards', () => {
    const w = world();
    write(
      join(w.project, 'package.json'),
      packageJson({
        dependencies: { next: '15', '@acme/design-system': '1' },
        devDependencies: { vitest: '3', '@storybook/react': '8' },
        peerDependencies: { '@nestjs/core': '11' },
      }),
    );
    const found = w.detect({ rules: rules({ dependency_tags: { '@acme/*': ['acme', 'design'] } }) });
    expect(found.tags).toEqual(['acme', 'backend', 'design', 'frontend', 'nestjs', 'nextjs', 'nodejs', 'react', 'storybook', 'vitest']);
    expect(found.reasons.react).toEqual(['dependency next']);
    expect(found.reasons.storybook).toEqual(['dependency @storybook/react']);
    expect(found.reasons.acme).toEqual(['dependency @acme/design-system']);
  });

  it('E: tags by top-level folders of the repository root, and only by folders', () => {
    const w = world();
    gitRepo(w.project);
    mkdirSync(join(w.project, 'packages', 'web', 'components'), { recursive: true });
    mkdirSync(join(w.project, 'src', 'components'), { recursive: true });
    writeFileSync(join(w.project, 'apps'), 'a file, not a folder');
    const found = w.detect({ cwd: join(w.project, 'packages', 'web'), rules: rules({ dir_patterns: { 'infra/': ['infra'], src: ['has-src'] } }) });
    expect(found.tags).toEqual(['frontend', 'has-src', 'monorepo']);
    expect(found.reasons).toEqual({ frontend: ['directory src/components/'], 'has-src': ['directory src/'], monorepo: ['directory packages/'] });
  });

  it('adds user rules to the built-ins, or uses them alone with builtin: false', () => {
    const w = world();
    write(join(w.project, 'tsconfig.json'), '{}');
    write(join(w.project, 'deploy.yaml'), '');
    const section = { file_markers: { 'deploy.yaml': ['deploy'] } };
    expect(w.detect({ rules: rules(section) }).tags).toEqual(['deploy', 'typescript']);
    expect(w.detect({ rules: rules({ ...section, builtin: false }), cacheDir: null }).tags).toEqual(['deploy']);
  });

  it('keeps the repository name out of the tags', () => {
    const w = world();
    gitRepo(w.project);
    const found = w.detect();
    expect(found.repo).toBe('shop');
    expect(found.tags).toEqual([]);
  });

  it('scans only the first megabyte of a huge package.json, and says so', () => {
    const w = world();
    const filler = 'x'.repeat(5 * 1024 * 1024);
    write(join(w.project, 'package.json'), `{"name":"big","dependencies":{"react":"19"},"blob":"${filler}","devDependencies":{"jest":"30"}}`);
    const found = w.detect();
    expect(found.tags).toEqual(['frontend', 'nodejs', 'react']);
    expect(found.errors).toEqual([expect.stringContaining('only its first 1048576 were scanned')]);
  });

  it('reports a malformed package.json and a huge folder instead of throwing', () => {
    const w = world();
    write(join(w.project, 'package.json'), '{"dependencies": ');
    for (let i = 0; i < 2100; i++) writeFileSync(join(w.project, `f${i}.txt`), '');
    const found = w.detect();
    expect(found.tags).toEqual(['nodejs']);
    expect(found.errors).toEqual([
      expect.stringContaining('has more than 2000 entries'),
      expect.stringContaining('package.json is not valid JSON'),
    ]);
  });

  it('describes a folder that does not exist without throwing', () => {
    const w = world();
    const found = w.detect({ cwd: join(w.project, 'gone') });
    expect(found).toMatchObject({ cwd: join(w.project, 'gone'), repo: null, tags: [], cache: 'miss' });
    expect(found.errors).toEqual([expect.stringContaining('is not a folder that exists')]);
  });

  it('keeps at most 32 tags, and reports the rest', () => {
    const w = world();
    write(join(w.project, 'Makefile'), '');
    const many = Array.from({ length: 40 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const found = w.detect({ rules: { ...rules({ builtin: false }), file_markers: { Makefile: many } } });
    expect(found.tags).toEqual(many.slice(0, 32));
    expect(found.errors).toEqual(['40 tags detected; only the first 32 (alphabetically) are kept']);
  });

  it('reports a bad pattern given by a caller (config.json would refuse it) instead of throwing', () => {
    const w = world();
    const found = w.detect({ rules: { ...rules(), path_patterns: [{ pattern: '([', tags: ['x'] }] } });
    expect(found.tags).toEqual([]);
    expect(found.errors).toEqual([expect.stringContaining('tag pattern ([ is not a valid regular expression')]);
  });

  it('names the OS the way prerequisites do', () => {
    const w = world();
    expect(w.detect({ platform: 'win32', cacheDir: null }).os).toBe('windows');
    expect(w.detect({ platform: 'darwin', cacheDir: null }).os).toBe('darwin');
  });
});
