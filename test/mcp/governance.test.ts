/**
 * The MCP server and the review gate as one product, through the real processes: the built `engram mcp` driven by
 * the SDK's Client over stdio (its operations answered by the warm server it starts), the real `bin/engram` for what a
 * person does (review, approve, undo), and the real hook launcher for what later sessions are shown.
 *
 * - An agent's save (mem_save, engram_add, passive capture, session summary) is learned by `agent` and gets the status
 *   its tier and the policy give it — pending by default —; the agent's own searches find it marked pending; hooks and
 *   `memory://recall` leave it out until a person approves it.
 * - Every engram change the agent makes — edits, deprecations, pins, deletes, topic revisions, duplicate counts,
 *   passive capture, session summaries, project merges — writes one audit row with actor `agent` via `mcp`, and
 *   `engram undo <token>` puts the rows back exactly (compared column by column).
 * - engram_explain follows an engram id to where it was learned; engram_doc and `engram://docs/{id}` read a knowledge
 *   doc entry of the repository the agent works in.
 */
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { addEngram, momentSource } from '../../src/services/index.js';
import { writeTape } from '../../src/services/tape/store.js';
import { engramProcess, hookProcess, ROOT } from '../_helpers.js';
import { ask, code, create, say, tape } from '../services/tape/_tapes.js';
import { connect, logLines, workspace } from './_mcp.js';

type Row = Record<string, unknown>;

/** Reads the store as it is on disk (a second connection, read-only). */
function inStore<T>(home: string, fn: (store: Store) => T): T {
  const store = openStore({ path: join(home, 'engram.db'), readonly: true });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** Every row of a table, in key order: what undo must restore exactly. */
const table = (home: string, name: string): Row[] => inStore(home, (store) => store.db.prepare(`SELECT * FROM ${name} ORDER BY 1`).all() as Row[]);
const engramRow = (home: string, id: number): Row | undefined => inStore(home, (store) => store.db.prepare('SELECT * FROM engrams WHERE id = ?').get(id) as Row | undefined);
const auditRows = (home: string): Array<{ seq: number; token: string; actor: string; via: string; op: string; engram_ids: number[] }> =>
  inStore(home, (store) =>
    (store.db.prepare('SELECT seq, token, actor, via, op, engram_ids FROM audit_log ORDER BY seq').all() as Array<Row & { engram_ids: string }>).map((row) => ({
      ...(row as unknown as { seq: number; token: string; actor: string; via: string; op: string }),
      engram_ids: JSON.parse(row.engram_ids) as number[],
    })),
  );

/** `bin/engram <args>` as a person runs it; its JSON answer. */
function person(home: string, cwd: string, ...args: string[]): any {
  const run = engramProcess(args, { home, cwd });
  expect(run.status, `engram ${args.join(' ')}: ${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout);
}

/** The token of the agent's latest operation, as a person finds it (`engram audit --actor agent`). */
function lastAgentToken(home: string, cwd: string, op: string): string {
  const [entry] = person(home, cwd, 'audit', '--actor', 'agent', '--limit', '1');
  expect(entry).toMatchObject({ actor: 'agent', via: 'mcp', op });
  return entry.token as string;
}

/** What a UserPromptSubmit hook in `cwd` injects (the in-process path: the same search the server runs). */
async function injected(home: string, cwd: string, session: string, prompt: string): Promise<string> {
  const stdin = JSON.stringify({ session_id: session, transcript_path: join(home, `${session}.jsonl`), cwd, hook_event_name: 'UserPromptSubmit', prompt });
  const hook = await hookProcess('user-prompt-submit', stdin, { home });
  expect(hook.code).toBe(0);
  return hook.stdout;
}

const recall = async (client: Awaited<ReturnType<typeof connect>>['client']): Promise<string> => {
  const read = (await client.readResource({ uri: 'memory://recall' })) as ReadResourceResult;
  return read.contents.map((part) => ('text' in part ? part.text : '')).join('');
};

// Each case spawns a dozen processes (bin/engram, the hook launcher, the MCP server and the warm server it starts):
// not a time bound, room for a loaded 2-core machine.
const SPAWNS = { timeout: 120_000 };

describe("an agent's saves wait for a person", SPAWNS, () => {
  it('are learned by the agent, pending, found by its own searches, never injected or recalled until approved at the command line', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    const saved = await mcp.tool('mem_save', { title: 'Flaky deploy', content: 'The deploy fails when the search index already exists; drop it first.', type: 'bugfix' });
    expect(saved.text).toMatch(/^Memory saved: "Flaky deploy" \(bugfix\)\nSuggested topic_key: bug\/flaky-deploy\nStatus: pending review — tier 2 \(kind 'bugfix' is tier 2\): waits for review\. /);
    const lesson = JSON.parse((await mcp.tool('engram_add', { text: 'Staging deploys run from the release branch only.', project: 'shop' })).text);
    expect(lesson).toMatchObject({ status: 'created', id: 2, engram: { status: 'pending' }, undo_token: expect.stringMatching(/^u-/) });

    // Stored as the agent's, pending, each with its audit row (actor fixed by the server: agent via mcp).
    expect(inStore(home, (store) => [1, 2].map((id) => store.engrams.get(id)).map((e) => [e?.status, e?.learned_by, e?.tier]))).toEqual([
      ['pending', 'agent', 2],
      ['pending', 'agent', 2],
    ]);
    expect(auditRows(home).map((row) => [row.actor, row.via, row.op, row.engram_ids])).toEqual([
      ['agent', 'mcp', 'add', [1]],
      ['agent', 'mcp', 'add', [2]],
    ]);

    // The agent finds what it saved, marked pending, through every read it has.
    expect((await mcp.tool('mem_search', { query: 'deploy search index' })).text).toMatch(/\[1\] #1 \(bugfix\) — Flaky deploy\n[^\n]+\n[^\n]+\n {4}status: pending review\n/);
    expect(JSON.parse((await mcp.tool('engram_search', { query: 'staging deploys release branch' })).text).results[0]).toMatchObject({ id: 2, status: 'pending' });
    expect(JSON.parse((await mcp.tool('engram_list', {})).text)).toMatchObject({ total: 2, engrams: [{ id: 1, status: 'pending' }, { id: 2, status: 'pending' }] });
    expect((await mcp.tool('mem_context', {})).text).toContain('- [bugfix] **Flaky deploy** (pending review): The deploy fails');
    // Nothing pending is recalled or injected.
    expect(await recall(mcp.client)).not.toContain('EG#');
    expect(await injected(home, project, 'later-1', 'why does the deploy fail on the search index?')).toBe('');

    // A person sees both in review, approves them at the command line; the next session is shown them.
    const queue = person(home, project, 'review');
    expect(queue.items.map((item: { engram: { id: number; learned_by: string } }) => [item.engram.id, item.engram.learned_by])).toEqual([
      [1, 'agent'],
      [2, 'agent'],
    ]);
    person(home, project, 'approve', '1', '2');
    expect(await injected(home, project, 'later-2', 'why does the deploy fail on the search index?')).toContain('EG#1 [bugfix] Flaky deploy: The deploy fails');
    const text = await recall(mcp.client);
    expect(text).toContain('(EG#1)');
    expect(text).toContain('Staging deploys run from the release branch only. (EG#2)');
    // Active now: no status line any more.
    expect((await mcp.tool('mem_search', { query: 'deploy search index' })).text).not.toContain('status:');
  });

  it('get the status their tier and the configured policy give them', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project, config: { governance: { autopromote: true, tiers: { convention: 1 } } } });
    const save = async (type: string, content: string) => {
      const text = (await mcp.tool('mem_save', { title: `A ${type}`, content, type })).text;
      return Number(/\nID: (\d+)$/.exec(text)?.[1]);
    };
    const discovery = await save('discovery', 'The CI runner has 2 cores and 7 GB of memory.');
    const convention = await save('convention', 'Test files sit beside their module as name.test.ts.');
    const decision = await save('decision', 'We chose Postgres over MySQL for JSON columns.');
    const rule = await save('discovery', 'Never run the migration against the production database by hand.');
    expect(inStore(home, (store) => [discovery, convention, decision, rule].map((id) => [store.engrams.get(id)?.status, store.engrams.get(id)?.tier]))).toEqual([
      ['active', 1], // tier 1 kind, autopromote on
      ['active', 1], // tier 1 by config
      ['pending', 2], // tier 2 waits whatever autopromote says
      ['pending', 3], // names production and forbids: tier 3 always waits
    ]);
    expect(await injected(home, project, 'later', 'how many cores does the CI runner have?')).toContain(`EG#${discovery} `);
    // Passive capture follows the same rules: `passive` is tier 2.
    const captured = await mcp.tool('mem_capture_passive', { content: '## Key Learnings:\n1. The staging cluster is rebuilt every Sunday night\n' });
    expect(captured.text).toBe(
      'Passive capture complete: extracted=1 saved=1 duplicates=0\n1 of the 1 saved waits for review: later sessions are shown it only after a person approves it; your own searches find it now.',
    );
  });
});

describe("an agent's changes are audited as the agent and undone exactly by a person", SPAWNS, () => {
  it('edits, deprecations, pins, soft and hard deletes of a reviewed engram', async () => {
    const { home, project } = workspace();
    const added = person(home, project, 'add', 'Release builds need NODE_ENV=production or the bundle keeps its debug asserts.', '--project', 'shop', '--tags', 'build');
    const id = added.engram.id as number;
    expect(added.engram.status).toBe('active');
    const mcp = await connect(home, { cwd: project });
    const original = engramRow(home, id);
    const undo = (token: string) => person(home, project, 'undo', token);

    // The agent re-words it: back to review (hooks stop showing it); undo brings the reviewed text back exactly.
    const edited = JSON.parse((await mcp.tool('engram_update', { id, text: 'Release builds need NODE_ENV=production.' })).text);
    expect(edited).toMatchObject({ status: 'updated', engram: { status: 'pending' }, undo_token: expect.stringMatching(/^u-/) });
    expect(await injected(home, project, 's1', 'release builds NODE_ENV production debug asserts')).not.toContain(`EG#${id} `);
    expect(auditRows(home).at(-1)).toMatchObject({ actor: 'agent', via: 'mcp', op: 'edit', engram_ids: [id], token: edited.undo_token });
    undo(edited.undo_token);
    expect(engramRow(home, id)).toEqual(original);
    expect(await injected(home, project, 's2', 'release builds NODE_ENV production debug asserts')).toContain(`EG#${id} `);

    // Each of the agent's other changes, one at a time: audited as the agent, undone to the row as it was.
    const changes: Array<[string, () => Promise<unknown>, string]> = [
      ['deprecate', () => mcp.tool('engram_deprecate', { id, reason: 'outdated' }), 'deprecate'],
      ['pin', () => mcp.tool('engram_pin', { id }), 'pin'],
      ['mem_update', () => mcp.tool('mem_update', { id, title: 'Release flag', type: 'config' }), 'edit'],
      ['soft delete', () => mcp.tool('mem_delete', { id }), 'delete'],
      ['hard delete', () => mcp.tool('mem_delete', { id, hard_delete: true }), 'delete-hard'],
    ];
    for (const [what, change, op] of changes) {
      const before = engramRow(home, id);
      const result = (await change()) as { isError: boolean; text: string };
      expect(result.isError, `${what}: ${result.text}`).toBe(false);
      expect(engramRow(home, id), what).not.toEqual(before);
      undo(lastAgentToken(home, project, op));
      expect(engramRow(home, id), what).toEqual(before);
    }
    // Taking a deprecation back is the agent's too, and never makes an engram active: it waits for review.
    await mcp.tool('engram_deprecate', { id, reason: 'outdated' });
    expect(JSON.parse((await mcp.tool('engram_deprecate', { id, undo: true })).text)).toMatchObject({ deprecated: false, review_status: 'pending' });
    // A person's `engram undo` without a token picks their own latest operation (their add), never the agent's —
    // and refuses here, because the agent's later changes depend on it.
    const own = engramProcess(['undo'], { home, cwd: project });
    expect(own.status).not.toBe(0);
    expect(own.stdout + own.stderr).toMatch(/cannot undo u-\w+ \(add of #1 at [^)]+\): later changes depend on it/);
    expect(person(home, project, 'audit', '--verify')).toMatchObject({ ok: true });
  });

  it('topic revisions, duplicate counts, passive capture, session summaries and project merges: every raw write path', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    await mcp.tool('mem_session_start', { id: 'sess-1', project: 'shop', directory: project });
    // Sessions named by every write below exist already: a session a save creates on demand is an activity record,
    // like a prompt, and stays when the save is undone (docs/GOVERNANCE.md).
    await mcp.tool('mem_save', { title: 'Auth model', content: 'Sessions live in Redis.', type: 'architecture', topic_key: 'architecture/auth-model', session_id: 'sess-1' });
    await mcp.tool('mem_save_prompt', { content: 'move the auth sessions to JWT', session_id: 'sess-1' });
    await mcp.tool('mem_save', { title: 'Drift', content: 'Saved under another spelling.', project: 'Shop-App' });
    const snapshot = () => ({ engrams: table(home, 'engrams'), sessions: table(home, 'sessions'), prompts: table(home, 'user_prompts') });
    const audited = auditRows(home).length;
    // Prompts and sessions are not memories: they change no engram and write no audit row.
    expect(auditRows(home).map((row) => row.op)).toEqual(['add', 'add']);

    const writes: Array<[string, () => Promise<{ isError: boolean; text: string }>, string]> = [
      ['topic revision', () => mcp.tool('mem_save', { title: 'Auth model', content: 'JWT now.', type: 'architecture', topic_key: 'architecture/auth-model', session_id: 'sess-1' }), 'revise'],
      ['duplicate count', () => mcp.tool('mem_save', { title: 'Drift', content: 'Saved under another spelling.', project: 'Shop-App' }), 'restate'],
      [
        'passive capture',
        () => mcp.tool('mem_capture_passive', { content: '## Key Learnings:\n1. Redis keys expire after one hour here\n2. The JWT secret rotates every month\n', session_id: 'sess-1' }),
        'passive-capture',
      ],
      ['session summary', () => mcp.tool('mem_session_summary', { content: '## Goal\nJWT sessions\n## Accomplished\n- moved auth to JWT', session_id: 'sess-1' }), 'session-summary'],
      ['project merge', () => mcp.tool('mem_merge_projects', { from: 'Shop-App', to: 'shop' }), 'merge-projects'],
    ];
    for (const [what, write, op] of writes) {
      const before = snapshot();
      const result = await write();
      expect(result.isError, `${what}: ${result.text}`).toBe(false);
      const after = snapshot();
      expect(after, what).not.toEqual(before);
      const entry = auditRows(home).at(-1)!;
      expect({ what, actor: entry.actor, via: entry.via, op: entry.op }).toEqual({ what, actor: 'agent', via: 'mcp', op });
      person(home, project, 'undo', entry.token);
      expect(snapshot(), `${what} undone`).toEqual(before);
      // Redo (undo the undo): the write stands again, exactly as the agent made it.
      person(home, project, 'undo', auditRows(home).at(-1)!.token);
      expect(snapshot(), `${what} redone`).toEqual(after);
    }
    expect(auditRows(home).length).toBe(audited + writes.length * 3);
    // The merged rows are the agent's merge: a session and two engrams moved, and what moved is pending still.
    expect(inStore(home, (store) => store.observations.projectNames())).toEqual(['shop']);
    expect(person(home, project, 'audit', '--verify')).toMatchObject({ ok: true });
  });
});

describe('explain and knowledge docs over MCP', SPAWNS, () => {
  it('engram_explain follows an engram id to the session, moment, files, liveness and history it was learned in', async () => {
    const { home, project } = workspace();
    // An opted-in repository whose tape recorded the session that taught a lesson (extraction's way of storing it).
    mkdirSync(join(project, '.engram', 'tapes'), { recursive: true });
    const quote = 'computeTotals must round each line before summing';
    const learned = tape('learn', 1, [ask(`Add the cart totals; ${quote}.`), create('src/cart.ts', ['export function computeTotals() {', code('totals', 6), '}'].join('\n')), say('Done.')]);
    const written = await writeTape(join(project, '.engram', 'tapes'), learned.events);
    const store = openStore({ path: join(home, 'engram.db') });
    try {
      const source = momentSource([{ ...learned, tape_id: written.tape_id }], quote, 'computeTotals in src/cart.ts rounds each line before summing.', { sessionId: 'session-learn', cwd: project });
      addEngram(store, { text: 'computeTotals in src/cart.ts rounds each line before summing.', project: 'shop', kind: 'correction' }, { actor: { by: 'harvest', via: 'job' }, sources: [source!] });
    } finally {
      store.close();
    }
    const mcp = await connect(home, { cwd: project });
    const why = JSON.parse((await mcp.tool('engram_explain', { id: 1 })).text);
    expect(why.summary).toMatch(/^extracted from session session-learn \(tape [0-9a-f]{16}\) on .*; now pending$/);
    expect(why.engram).toMatchObject({ id: 1, status: 'pending', learned_by: 'harvest' });
    expect(why.sources[0]).toMatchObject({ tape_found: true, files: [expect.objectContaining({ file: 'src/cart.ts', kind: 'edit' })] });
    expect(why.sources[0].moment.map((event: { text: string }) => event.text)).toEqual([`person: Add the cart totals; ${quote}.`, 'create src/cart.ts:1-8', 'agent: Done.']);
    expect(why.liveness).toMatchObject({ state: 'unknown' });
    expect(why.history.map((step: { op: string; actor: string }) => [step.op, step.actor])).toEqual([['add', 'harvest']]);

    // The agent's own save: saved by the agent in its session, its history the agent's add.
    await mcp.tool('mem_save', { title: 'Totals', content: 'Cart totals are computed in cents.' });
    const own = JSON.parse((await mcp.tool('engram_explain', { id: 2 })).text);
    expect(own.summary).toMatch(/^saved by the agent in session manual-save-shop on .*; now pending$/);
    expect(own.history.map((step: { op: string; actor: string; via: string }) => [step.op, step.actor, step.via])).toEqual([['add', 'agent', 'mcp']]);

    expect(await mcp.tool('engram_explain', { id: 99 })).toEqual({ isError: true, text: 'NOT_FOUND: engram 99 does not exist and has no history' });
    expect(await mcp.tool('engram_explain', {})).toMatchObject({ isError: true, text: expect.stringMatching(/^INVALID_INPUT: give either span/) });
    expect(await mcp.tool('engram_explain', { id: 1, span: 'src/cart.ts:1-3' })).toMatchObject({ isError: true, text: expect.stringMatching(/^INVALID_INPUT: /) });
  });

  it('engram_doc and engram://docs/{id} read an entry of the knowledge docs of the repository the agent works in', async () => {
    const { home, project } = workspace();
    const docs = join(project, 'docs', 'decisions');
    mkdirSync(docs, { recursive: true });
    mkdirSync(join(project, '.engram'), { recursive: true });
    writeFileSync(join(project, '.engram', 'config.yaml'), 'model: sonnet\n');
    for (const name of readdirSync(join(ROOT, 'fixtures', 'knowledge', 'seed'))) copyFileSync(join(ROOT, 'fixtures', 'knowledge', 'seed', name), join(docs, name));
    mkdirSync(join(project, 'src'));
    const mcp = await connect(home, { cwd: join(project, 'src') });

    const claim = JSON.parse((await mcp.tool('engram_doc', { id: 'E007' })).text);
    expect(claim).toMatchObject({ id: 'E007', kind: 'claim', status: 'CONTESTED', form: 'full', file: 'docs/decisions/epistemic_state.md' });
    const stub = JSON.parse((await mcp.tool('engram_doc', { id: 'c012' })).text);
    expect(stub).toMatchObject({ id: 'C012', form: 'stub', status: 'DEAD', points_to: 'concept_graveyard.md#C012' });
    expect(await mcp.tool('engram_doc', { id: 'C999' })).toMatchObject({ isError: true, text: expect.stringMatching(/^NOT_FOUND: no entry C999 in /) });
    expect(await mcp.tool('engram_doc', { id: 'proximity' })).toMatchObject({ isError: true, text: expect.stringMatching(/^INVALID_INPUT: /) });

    const read = (await mcp.client.readResource({ uri: 'engram://docs/C012' })) as ReadResourceResult;
    expect(read.contents).toHaveLength(1);
    const text = (read.contents[0] as { text: string; mimeType: string }).text;
    expect(read.contents[0]).toMatchObject({ uri: 'engram://docs/C012', mimeType: 'text/markdown' });
    expect(text).toContain('C012');
    expect(text).toContain('- **Lesson:** Proximity alone was too aggressive');
    await expect(mcp.client.readResource({ uri: 'engram://docs/C999' })).rejects.toThrow(/-32002.*NOT_FOUND: no entry C999/);
    await expect(mcp.client.readResource({ uri: 'engram://nothing' })).rejects.toThrow(/-32002.*Resource engram:\/\/nothing not found/);
    // A doc entry is read in the MCP process (the repository's files), not through the server.
    expect(logLines(home, 'mcp').filter((line) => line.method === 'docs.entry').map((line) => line.by)).toEqual(['local', 'local', 'local']);
  });

  it('lists its resources and the template with annotations', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    expect(mcp.client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    expect((await mcp.client.listResources()).resources).toEqual([
      expect.objectContaining({ uri: 'memory://recall', name: 'recall', mimeType: 'text/markdown', annotations: { audience: ['assistant'], priority: 0.9 } }),
    ]);
    expect((await mcp.client.listResourceTemplates()).resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: 'engram://docs/{id}', name: 'doc-entry', annotations: { audience: ['assistant', 'user'], priority: 0.5 } }),
    ]);
    // Nothing reviewed yet: the heading and the note, no engram.
    expect(await recall(mcp.client)).toMatch(/^## Memories from Engram\n\n_Reviewed memories/);
  });
});
