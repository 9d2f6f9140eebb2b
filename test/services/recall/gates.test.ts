import { describe, expect, it } from 'vitest';
import { currentOs, freshness, governancePolicy, passesGates, prerequisitesHold } from '../../../src/services/index.js';
import type { Engram } from '../../../src/core/index.js';

const engram = (fields: Partial<Engram> = {}): Engram => ({
  id: 1,
  uid: '00000000-0000-4000-8000-000000000001',
  kind: 'lesson',
  title: null,
  text: 'x',
  content: null,
  category: 'development/frontend',
  tags: ['react', 'testing'],
  prerequisites: null,
  source: 'manual',
  source_sessions: [],
  tool_name: null,
  occurrence_count: 1,
  times_matched: 0,
  last_matched_at: null,
  pinned: false,
  auto_pinned: false,
  deprecated: false,
  deprecated_reason: null,
  project: null,
  scope: 'personal',
  topic_key: null,
  content_hash: 'h',
  revision_count: 0,
  duplicate_count: 0,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  last_seen_at: '2026-01-01T00:00:00.000Z',
  deleted_at: null,
  status: 'active',
  status_reason: null,
  learned_by: 'user',
  tier: 2,
  confirmed_at: '2026-01-01T00:00:00.000Z',
  liveness: 'unknown',
  liveness_at: null,
  ...fields,
});

describe('gates', () => {
  it('excludes deleted engrams and, unless asked for, every review state but active', () => {
    expect(passesGates(engram(), {}, {})).toBe(true);
    expect(passesGates(engram({ status: 'deprecated', deprecated: true }), {}, {})).toBe(false);
    expect(passesGates(engram({ deleted_at: '2026-02-01T00:00:00.000Z' }), {}, {})).toBe(false);
    for (const status of ['pending', 'rejected'] as const) expect(passesGates(engram({ status }), {}, {})).toBe(false);
    expect(passesGates(engram({ status: 'pending' }), { statuses: ['active', 'pending'] }, {})).toBe(true);
    expect(passesGates(engram({ status: 'rejected' }), { statuses: ['active', 'pending'] }, {})).toBe(false);
  });

  it("finds the agent's own pending saves when asked, and no one else's", () => {
    const own = { pendingLearnedBy: ['agent'] as const };
    expect(passesGates(engram({ status: 'pending', learned_by: 'agent' }), own, {})).toBe(true);
    expect(passesGates(engram({ status: 'pending', learned_by: 'harvest' }), own, {})).toBe(false);
    expect(passesGates(engram({ status: 'rejected', learned_by: 'agent' }), own, {})).toBe(false);
  });

  it('for injection, leaves out stale engrams unless pinned, and engrams whose code is gone', () => {
    const injection = freshness(governancePolicy(), new Date('2027-06-01T00:00:00.000Z')); // lessons decay after a year
    expect(passesGates(engram(), { injection }, {})).toBe(false);
    expect(passesGates(engram({ pinned: true }), { injection }, {})).toBe(true);
    expect(passesGates(engram({ last_matched_at: '2027-01-01T00:00:00.000Z' }), { injection }, {})).toBe(true);
    const fresh = freshness(governancePolicy(), new Date('2026-02-01T00:00:00.000Z'));
    expect(passesGates(engram(), { injection: fresh }, {})).toBe(true);
    expect(passesGates(engram({ liveness: 'gone', pinned: true }), { injection: fresh }, {})).toBe(false);
    expect(passesGates(engram({ liveness: 'kept' }), { injection: fresh }, {})).toBe(true);
    // Outside injection (an explicit search), a stale engram is still found.
    expect(passesGates(engram(), {}, {})).toBe(true);
  });

  it('matches categories hierarchically, on segment boundaries', () => {
    expect(passesGates(engram(), { category: 'development' }, {})).toBe(true);
    expect(passesGates(engram(), { category: 'development/frontend' }, {})).toBe(true);
    expect(passesGates(engram(), { category: 'development/front' }, {})).toBe(false);
    expect(passesGates(engram(), { category: 'develop' }, {})).toBe(false);
    expect(passesGates(engram(), { category: 'development/frontend/react' }, {})).toBe(false);
  });

  it('requires all of the requested tags', () => {
    expect(passesGates(engram(), { tags: ['react'] }, {})).toBe(true);
    expect(passesGates(engram(), { tags: ['react', 'testing'] }, {})).toBe(true);
    expect(passesGates(engram(), { tags: ['react', 'vue'] }, {})).toBe(false);
  });

  it('scopes to a project, with or without the personal engrams', () => {
    const personal = engram();
    const shop = engram({ project: 'shop', scope: 'project' });
    const blog = engram({ project: 'blog', scope: 'project' });
    const inShop = { scope: { project: 'shop', includePersonal: true } };
    expect([personal, shop, blog].map((e) => passesGates(e, inShop, {}))).toEqual([true, true, false]);
    const onlyShop = { scope: { project: 'shop', includePersonal: false } };
    expect([personal, shop, blog].map((e) => passesGates(e, onlyShop, {}))).toEqual([false, true, false]);
  });
});

describe('structural prerequisites', () => {
  it('os: any listed OS, with aliases', () => {
    expect(prerequisitesHold({ os: ['linux'] }, { os: 'linux' })).toBe(true);
    expect(prerequisitesHold({ os: ['darwin'] }, { os: 'linux' })).toBe(false);
    expect(prerequisitesHold({ os: ['macOS', 'linux'] }, { os: 'darwin' })).toBe(true);
    expect(prerequisitesHold({ os: ['win32'] }, { os: currentOs('win32') })).toBe(true);
  });

  it('repos: the current project name, case-insensitive', () => {
    expect(prerequisitesHold({ repos: ['shop'] }, { repo: 'Shop' })).toBe(true);
    expect(prerequisitesHold({ repos: ['shop'] }, { repo: 'blog' })).toBe(false);
  });

  it('paths: the working directory inside one of them, on directory boundaries, ~ expanded', () => {
    expect(prerequisitesHold({ paths: ['/work/app'] }, { cwd: '/work/app/src' })).toBe(true);
    expect(prerequisitesHold({ paths: ['/work/app'] }, { cwd: '/work/app' })).toBe(true);
    expect(prerequisitesHold({ paths: ['/work/app'] }, { cwd: '/work/application' })).toBe(false);
    expect(prerequisitesHold({ paths: ['~/code'] }, { cwd: '/home/u/code/x', home: '/home/u' })).toBe(true);
    expect(prerequisitesHold({ paths: ['~/code'] }, { cwd: '/home/v/code/x', home: '/home/u' })).toBe(false);
  });

  it('mcp_servers: all of them configured', () => {
    expect(prerequisitesHold({ mcp_servers: ['github', 'linear'] }, { mcpServers: ['linear', 'github', 'x'] })).toBe(true);
    expect(prerequisitesHold({ mcp_servers: ['github', 'linear'] }, { mcpServers: ['github'] })).toBe(false);
  });

  it('every listed kind must hold', () => {
    const prerequisites = { os: ['linux'], repos: ['shop'] };
    expect(prerequisitesHold(prerequisites, { os: 'linux', repo: 'shop' })).toBe(true);
    expect(prerequisitesHold(prerequisites, { os: 'linux', repo: 'blog' })).toBe(false);
  });

  it('tags are not a gate, and an unknown environment field does not hide anything', () => {
    expect(prerequisitesHold({ tags: ['acme'] }, { tags: ['other'] })).toBe(true);
    expect(prerequisitesHold({ os: ['darwin'], mcp_servers: ['github'] }, {})).toBe(true);
    expect(passesGates(engram({ prerequisites: { repos: ['shop'] } }), {}, { repo: 'blog' })).toBe(false);
  });
});
