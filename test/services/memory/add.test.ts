import { describe, expect, it } from 'vitest';
import { addEngram } from '../../../src/services/index.js';
import { steppingClock, tempStore, thrown } from '../../_helpers.js';

describe('addEngram', () => {
  it('stores a normalised engram with every field of the schema', () => {
    const store = tempStore();
    const now = steppingClock();
    const { status, engram, redacted } = addEngram(
      store,
      {
        text: '  Use `pnpm -r build` from the repo root; per-package builds miss shared types. ',
        title: 'Monorepo builds',
        category: ' Development / Frontend ',
        tags: 'TypeScript, pnpm ,monorepo, pnpm',
        project: 'shop',
        prerequisites: { repos: ['shop'], os: [], tags: ['frontend'] },
      },
      { now },
    );
    expect(status).toBe('created');
    expect(redacted).toEqual([]);
    expect(engram).toMatchObject({
      id: 1,
      kind: 'lesson',
      title: 'Monorepo builds',
      text: 'Use `pnpm -r build` from the repo root; per-package builds miss shared types.',
      category: 'development/frontend',
      tags: ['monorepo', 'pnpm', 'typescript'],
      prerequisites: { repos: ['shop'], tags: ['frontend'] },
      source: 'manual',
      project: 'shop',
      scope: 'project',
      pinned: false,
      deprecated: false,
      occurrence_count: 1,
      revision_count: 0,
      duplicate_count: 0,
      created_at: '2026-11-01T10:00:00.000Z',
      deleted_at: null,
    });
    expect(engram.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(engram.content_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('defaults to a personal engram in the general category', () => {
    const { engram } = addEngram(tempStore(), { text: 'Prefer small commits.' });
    expect(engram).toMatchObject({ category: 'general', tags: [], project: null, scope: 'personal', prerequisites: null });
  });

  it('removes secrets and private spans before storing, and says which kinds', () => {
    const store = tempStore();
    const { engram, redacted } = addEngram(store, {
      text: 'Deploy with AKIAIOSFODNN7EXAMPLE <private>and the vault pin 4711</private> from CI.',
      content: 'DB_PASSWORD=hunter22-prod',
    });
    expect(engram.text).toBe('Deploy with [REDACTED:aws-access-key] [REDACTED] from CI.');
    expect(engram.content).toBe('DB_PASSWORD=[REDACTED:env-secret]');
    expect(redacted.sort()).toEqual(['aws-access-key', 'env-secret', 'private']);
    const raw = store.db.prepare('SELECT text || content FROM engrams').pluck().get() as string;
    expect(raw).not.toMatch(/AKIA|4711|hunter22/);
  });

  it('rejects text that is empty once private content is removed', () => {
    expect(thrown(() => addEngram(tempStore(), { text: '<private>all of it</private>' }))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => addEngram(tempStore(), { text: '   ' }))?.code).toBe('INVALID_INPUT');
  });

  it('rejects over-long text with a message naming the limit', () => {
    const error = thrown(() => addEngram(tempStore(), { text: 'x'.repeat(2001) }));
    expect(error?.code).toBe('INVALID_INPUT');
    expect(error?.message).toBe('text is 2001 characters; the limit is 2000; put longer detail in content');
  });

  it.each([
    ['an empty category segment', { category: 'development//frontend' }, "category 'development//frontend' has an empty segment"],
    ['a category with symbols', { category: 'dev/fr*nt' }, "category segment 'fr*nt' may only contain"],
    ['a tag with symbols', { tags: ['ok', 'bad tag!'] }, "tag 'bad-tag!' may only contain"],
    ['unknown prerequisite keys', { prerequisites: { branch: ['main'] } }, 'prerequisites are invalid'],
  ])('rejects %s with a specific message', (_name, extra, message) => {
    const error = thrown(() => addEngram(tempStore(), { text: 'A lesson.', ...extra }));
    expect(error?.code).toBe('INVALID_INPUT');
    expect(error?.message).toContain(message);
  });

  it.each([
    ['category', { category: 'deploy/AKIAIOSFODNN7EXAMPLE' }],
    ['a tag', { tags: ['ok', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'] }],
    ['project', { project: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123' }],
    ['topic key', { topic_key: 'token=hunter22abc' }],
  ])('refuses a %s that holds a secret, without repeating it', (field, extra) => {
    const error = thrown(() => addEngram(tempStore(), { text: 'A lesson.', ...extra }));
    expect(error?.code).toBe('INVALID_INPUT');
    expect(error?.message).toMatch(new RegExp(`^${field} contains what looks like a secret \\([a-z-]+\\); it was not stored$`));
  });

  it('counts an exact duplicate (ignoring case and spacing) instead of storing it twice', () => {
    const store = tempStore();
    const now = steppingClock();
    const first = addEngram(store, { text: 'Run the linter before pushing.', tags: ['lint'], project: 'p' }, { now });
    const second = addEngram(store, { text: 'run the  LINTER before pushing.', tags: ['ci'], project: 'p' }, { now });
    expect(second.status).toBe('duplicate');
    expect(second.engram.id).toBe(first.engram.id);
    expect(second.engram.duplicate_count).toBe(1);
    expect(second.engram.tags).toEqual(['ci', 'lint']);
    expect(second.engram.last_seen_at > first.engram.last_seen_at).toBe(true);
    expect(store.engrams.counts().total).toBe(1);
  });

  it('keeps the same text in different projects or scopes apart', () => {
    const store = tempStore();
    addEngram(store, { text: 'Run the linter before pushing.', project: 'a' });
    addEngram(store, { text: 'Run the linter before pushing.', project: 'b' });
    addEngram(store, { text: 'Run the linter before pushing.' });
    expect(store.engrams.counts().total).toBe(3);
  });

  it('revises in place when the topic key matches, bumping revision_count', () => {
    const store = tempStore();
    const first = addEngram(store, { text: 'Node 18 is the minimum.', topic_key: 'Runtime Version' });
    const second = addEngram(store, { text: 'Node 20.19 is the minimum.', topic_key: 'runtime version' });
    expect(second.status).toBe('revised');
    expect(second.engram).toMatchObject({ id: first.engram.id, text: 'Node 20.19 is the minimum.', topic_key: 'runtime-version', revision_count: 1 });
    expect(store.engrams.counts().total).toBe(1);
  });

  it('leaves a duplicate untouched when asked to skip it', () => {
    const store = tempStore();
    addEngram(store, { text: 'Same lesson.' });
    const again = addEngram(store, { text: 'Same lesson.' }, { onDuplicate: 'skip' });
    expect(again.status).toBe('skipped');
    expect(again.engram.duplicate_count).toBe(0);
  });

  it('stores a new engram when the only match was deleted', () => {
    const store = tempStore();
    const first = addEngram(store, { text: 'Same lesson.' });
    store.engrams.update(first.engram.id, { deleted_at: '2026-11-01T00:00:00.000Z' });
    expect(addEngram(store, { text: 'Same lesson.' }).status).toBe('created');
  });
});
