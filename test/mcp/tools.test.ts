/**
 * `engram mcp` as clients run it: the built server spawned as a real process (bin/engram → dist/cli.mjs) and driven
 * by the SDK's own Client over stdio. Pins the tool list (profiles, annotations, deferral marks, instructions), every
 * tool's behaviour and reply text — the Go engram's strings word for word — and that an observation saved over MCP is
 * an engram the hooks inject.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openStore } from '../../src/core/index.js';
import { readTape, recordTranscript, type CodeEditEvent } from '../../src/services/index.js';
import { engramProcess, hookProcess, SHARED } from '../_helpers.js';
import { connect, workspace } from './_mcp.js';

const ListedToolsSchema = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      title: z.string().optional(),
      inputSchema: z.object({ properties: z.record(z.string(), z.unknown()).optional(), required: z.array(z.string()).optional() }),
      annotations: z.object({ title: z.string(), readOnlyHint: z.boolean(), destructiveHint: z.boolean(), idempotentHint: z.boolean(), openWorldHint: z.boolean() }),
      _meta: z.record(z.string(), z.unknown()).optional(),
      defer_loading: z.boolean().optional(),
    }),
  ),
});

/** tools/list as the wire carries it (the SDK's own schema would drop the Go engram's defer_loading flag). */
async function rawTools(client: Awaited<ReturnType<typeof connect>>['client']) {
  return (await client.request({ method: 'tools/list' }, ListedToolsSchema)).tools;
}

/** The Go engram's annotation table (../shared/seeds/001 §2): read-only, destructive, idempotent, open-world, deferred. */
const GO_ANNOTATIONS: Record<string, [boolean, boolean, boolean, boolean, boolean]> = {
  mem_search: [true, false, true, false, false],
  mem_save: [false, false, false, false, false],
  mem_update: [false, false, false, false, true],
  mem_suggest_topic_key: [true, false, true, false, true],
  mem_delete: [false, true, false, false, true],
  mem_save_prompt: [false, false, false, false, false],
  mem_context: [true, false, true, false, false],
  mem_stats: [true, false, true, false, true],
  mem_timeline: [true, false, true, false, true],
  mem_get_observation: [true, false, true, false, false],
  mem_session_summary: [false, false, false, false, false],
  mem_session_start: [false, false, true, false, true],
  mem_session_end: [false, false, true, false, true],
  mem_capture_passive: [false, false, true, false, true],
  mem_merge_projects: [false, true, true, false, true],
};

const AGENT = ['mem_save', 'mem_search', 'mem_context', 'mem_session_summary', 'mem_session_start', 'mem_session_end', 'mem_get_observation', 'mem_suggest_topic_key', 'mem_capture_passive', 'mem_save_prompt', 'mem_update'];
const ADMIN = ['mem_delete', 'mem_stats', 'mem_timeline', 'mem_merge_projects'];
const ENGRAM = ['engram_search', 'engram_add', 'engram_update', 'engram_deprecate', 'engram_feedback', 'engram_pin', 'engram_unpin', 'engram_list', 'engram_status', 'engram_explain', 'engram_doc'];

/** What an agent's save says after the Go engram's lines: it waits for review (the default policy), and why. */
const pending = (why: string) => `Status: pending review — ${why}. Later sessions are shown it only after a person approves it; your own searches find it now.`;
const tier2 = (kind: string) => pending(`tier 2 (kind '${kind}' is tier 2): waits for review`);
/** "sessions do not scale": text that forbids or requires an action is tier 3, whatever its kind. */
const TIER3 = pending('tier 3 (it forbids or requires an action): always reviewed by a person');

describe('the tool list', () => {
  it('lists every tool with annotations, keeps core tools loaded, marks the rest deferred, and explains itself in two sentences', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    expect(mcp.client.getServerVersion()).toMatchObject({ name: 'engram' });
    const instructions = mcp.client.getInstructions() ?? '';
    expect(instructions.split(/(?<=\.)\s+(?=[A-Z])/)).toHaveLength(2);
    expect(instructions).toContain('engram_search');
    expect(instructions).toContain('engram_explain');

    const tools = await rawTools(mcp.client);
    expect(tools.map((tool) => tool.name).sort()).toEqual([...ENGRAM, ...AGENT, ...ADMIN].sort());
    for (const tool of tools) {
      expect(tool.annotations.title, tool.name).toBe(tool.title);
      expect(tool.annotations.openWorldHint, tool.name).toBe(false);
      // Either kept loaded or marked deferred, never both.
      expect(tool._meta?.['anthropic/alwaysLoad'] === true, tool.name).toBe(tool.defer_loading !== true);
    }
    for (const [name, [readOnly, destructive, idempotent, openWorld, deferred]] of Object.entries(GO_ANNOTATIONS)) {
      const tool = tools.find((candidate) => candidate.name === name)!;
      expect({ name, ...tool.annotations, deferred: tool.defer_loading === true }).toMatchObject({
        name,
        readOnlyHint: readOnly,
        destructiveHint: destructive,
        idempotentHint: idempotent,
        openWorldHint: openWorld,
        deferred,
      });
    }
    // Of Engram's tools, none is destructive (deprecating keeps the engram); the read ones say so.
    for (const name of ENGRAM) expect(tools.find((tool) => tool.name === name)?.annotations.destructiveHint).toBe(false);
    expect(tools.filter((tool) => tool.annotations.readOnlyHint).map((tool) => tool.name).filter((name) => name.startsWith('engram_')).sort()).toEqual(
      ['engram_doc', 'engram_explain', 'engram_list', 'engram_search', 'engram_status'],
    );
    // Arguments are described by the zod schemas: required fields are required.
    expect(tools.find((tool) => tool.name === 'mem_save')?.inputSchema.required?.sort()).toEqual(['content', 'title']);
    expect(tools.find((tool) => tool.name === 'engram_feedback')?.inputSchema.required?.sort()).toEqual(['applicable', 'id']);
  });

  it('selects tools by profile and name exactly as the Go engram does', async () => {
    const { home, project } = workspace();
    const cases: Array<[string | null, string[]]> = [
      ['--tools=agent', AGENT],
      ['--tools=admin', ADMIN],
      ['--tools=agent,admin', [...AGENT, ...ADMIN]],
      ['--tools=engram', ENGRAM],
      ['--tools=all', [...ENGRAM, ...AGENT, ...ADMIN]],
      ['--tools=', [...ENGRAM, ...AGENT, ...ADMIN]],
      ['--tools= mem_save , ,engram_search,', ['mem_save', 'engram_search']],
      ['--tools=mem_save,all', [...ENGRAM, ...AGENT, ...ADMIN]],
      ['--tools=mem_nothing,mem_stats', ['mem_stats']],
    ];
    for (const [arg, expected] of cases) {
      const mcp = await connect(home, { cwd: project, args: arg === null ? [] : [arg] });
      const names = (await mcp.client.listTools()).tools.map((tool) => tool.name);
      expect({ arg, names: names.sort() }).toEqual({ arg, names: [...expected].sort() });
      // A tool outside the profile is not there: calling it is a protocol error.
      if (!names.includes('engram_add')) {
        await expect(mcp.client.callTool({ name: 'engram_add', arguments: { text: 'x' } })).rejects.toThrow(/-32602.*Tool engram_add not found/);
      }
      await mcp.close();
    }
    // The Go engram's agent profile keeps its instructions about its own tools.
    const agent = await connect(home, { cwd: project, args: ['--tools=agent'] });
    expect(agent.client.getInstructions()).toContain('mem_save');
    expect(agent.client.getInstructions()).not.toContain('engram_search');
  });
});

describe("the Go engram's tools", () => {
  it('save, search, get, update, delete and context answer in its words', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    expect(await mcp.tool('mem_context')).toEqual({ text: 'No previous session memories found.', isError: false });
    expect(await mcp.tool('mem_search', { query: 'anything' })).toEqual({ text: 'No memories found for: "anything"', isError: false });

    const saved = await mcp.tool('mem_save', { title: 'JWT auth middleware', content: '**What**: Replaced express-session with JWT\n**Why**: sessions do not scale', type: 'decision' });
    // The Go engram's lines first; ours (the review status, the id) after them.
    expect(saved).toEqual({ text: `Memory saved: "JWT auth middleware" (decision)\nSuggested topic_key: decision/jwt-auth-middleware\n${TIER3}\nID: 1`, isError: false });
    // The same save within the window is a duplicate of the same row.
    const again = await mcp.tool('mem_save', { title: 'JWT auth middleware', content: '**What**: Replaced express-session with JWT\n**Why**: sessions do not scale', type: 'decision' });
    expect(again.text).toBe(
      `Memory saved: "JWT auth middleware" (decision)\nSuggested topic_key: decision/jwt-auth-middleware\nAlready saved in the last 15 minutes: counted as a duplicate (2 times).\n${TIER3}\nID: 1`,
    );
    const topic = await mcp.tool('mem_save', { title: 'Auth model', content: 'Sessions in Redis.', type: 'architecture', topic_key: 'architecture/auth-model' });
    expect(topic.text).toBe(`Memory saved: "Auth model" (architecture)\n${tier2('architecture')}\nID: 2`);
    expect((await mcp.tool('mem_save', { title: 'Auth model', content: 'JWT now.', type: 'architecture', topic_key: 'architecture/auth-model' })).text).toBe(
      `Memory saved: "Auth model" (architecture)\nUpdated the observation with this topic_key in place (revision 2).\n${tier2('architecture')}\nID: 2`,
    );
    await mcp.tool('mem_save', { title: 'Long one', content: `${'A long observation about caching. '.repeat(20)}`, type: 'pattern' });

    // The agent's own saves are found at once, each marked as waiting for review on a line after the Go engram's three.
    const found = await mcp.tool('mem_search', { query: 'JWT auth' });
    expect(found.text).toMatch(
      /^Found 2 memories:\n\n\[1\] #1 \(decision\) — JWT auth middleware\n {4}\*\*What\*\*: Replaced express-session with JWT\n\*\*Why\*\*: sessions do not scale\n {4}\d{4}-\d\d-\d\dT[\d:.]+Z \| project: shop \| scope: project\n {4}status: pending review\n\n\[2\] #2 \(architecture\) — Auth model\n/,
    );
    const preview = await mcp.tool('mem_search', { query: 'caching', type: 'pattern' });
    expect(preview.text).toContain('[1] #3 (pattern) — Long one');
    expect(preview.text).toContain('... [preview]');
    expect(preview.text.endsWith('---\nResults above are previews (300 chars). To read the full content of a specific memory, call mem_get_observation(id: <ID>).\n')).toBe(true);

    const full = await mcp.tool('mem_get_observation', { id: 2 });
    expect(full.text).toMatch(/^#2 \[architecture\] Auth model\nJWT now\.\nSession: manual-save-shop\nProject: shop\nScope: project\nTopic: architecture\/auth-model\nDuplicates: 1\nRevisions: 2\nCreated: \d{4}-[^\n]+\nStatus: pending review\. /);

    expect(await mcp.tool('mem_update', { id: 1, title: 'JWT middleware', scope: 'personal' })).toEqual({
      text: `Memory updated: #1 "JWT middleware" (decision, scope=personal)\n${TIER3}`,
      isError: false,
    });
    expect(await mcp.tool('mem_delete', { id: 3 })).toEqual({ text: 'Memory #3 soft-deleted', isError: false });
    expect(await mcp.tool('mem_get_observation', { id: 3 })).toEqual({ text: 'Observation #3 not found', isError: true });
    expect((await mcp.tool('mem_search', { query: 'caching' })).text).toBe('No memories found for: "caching"');
    expect(await mcp.tool('mem_delete', { id: 3, hard_delete: true })).toEqual({ text: 'Memory #3 permanently deleted', isError: false });

    const context = await mcp.tool('mem_context', { project: 'shop' });
    expect(context.text).toContain('## Memory from Previous Sessions\n\n### Recent Sessions\n- **shop** (');
    expect(context.text).toContain('### Recent Observations\n- [architecture] **Auth model** (pending review): JWT now.');
    expect(context.text).toMatch(/\n---\nMemory stats: 1 sessions, 2 observations across projects: shop$/);
    expect(await mcp.tool('mem_stats')).toEqual({ text: 'Memory System Stats:\n- Sessions: 1\n- Observations: 2\n- Prompts: 0\n- Projects: shop', isError: false });
    expect(await mcp.tool('mem_suggest_topic_key', { type: 'bugfix', title: 'Fixed N+1 query' })).toEqual({ text: 'Suggested topic_key: bug/fixed-n-1-query', isError: false });
    expect(await mcp.tool('mem_suggest_topic_key', {})).toEqual({ text: 'provide title or content to suggest a topic_key', isError: true });
  });

  it('sessions, prompts, summaries, passive capture, timeline and project merges', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    expect((await mcp.tool('mem_session_start', { id: 'sess-7', project: 'shop', directory: project })).text).toBe('Session "sess-7" started for project "shop"');
    for (let i = 1; i <= 4; i++) await mcp.tool('mem_save', { title: `Step ${i}`, content: `Did step number ${i}.`, session_id: 'sess-7' });
    expect((await mcp.tool('mem_save_prompt', { content: 'please add the retry helper', session_id: 'sess-7' })).text).toBe('Prompt saved: "please add the retry helper"');
    const learnings = '## Key Learnings:\n\n1. The retry helper must cap its backoff at thirty seconds\n2. FTS5 needs every user term quoted before MATCH\n';
    expect((await mcp.tool('mem_capture_passive', { content: learnings, session_id: 'sess-7' })).text).toBe(
      'Passive capture complete: extracted=2 saved=2 duplicates=0\n2 of the 2 saved wait for review: later sessions are shown them only after a person approves them; your own searches find them now.',
    );
    expect((await mcp.tool('mem_capture_passive', { content: learnings })).text).toBe('Passive capture complete: extracted=2 saved=0 duplicates=2');
    expect((await mcp.tool('mem_session_summary', { content: '## Goal\nA retry helper\n## Accomplished\n- ✅ done', session_id: 'sess-7' })).text).toBe(
      `Session summary saved for project "shop"\n${tier2('session_summary')}`,
    );
    expect((await mcp.tool('mem_session_end', { id: 'sess-7', summary: 'Retry helper added.' })).text).toBe('Session "sess-7" completed');
    expect(await mcp.tool('mem_session_end', { id: 'nobody' })).toEqual({ text: 'Failed to end session: session "nobody" does not exist', isError: true });

    const timeline = await mcp.tool('mem_timeline', { observation_id: 3, before: 1, after: 1 });
    expect(timeline.text).toMatch(
      /^Session: shop \(\d{4}-[^)]+\) — Retry helper added\.\nTotal observations in session: 7\n\n─── Before ───\n {2}#2 \[manual\] Step 2 — Did step number 2\. \[pending review\]\n\n>>> #3 \[manual\] Step 3 <<< \[pending review\]\n {4}Did step number 3\.\n {4}\d{4}-[^\n]+\n\n─── After ───\n {2}#4 \[manual\] Step 4 — Did step number 4\. \[pending review\]\n$/,
    );
    expect(await mcp.tool('mem_timeline', { observation_id: 99 })).toEqual({ text: 'Timeline error: observation #99 not found', isError: true });

    await mcp.tool('mem_save', { title: 'Drift', content: 'Saved under another spelling.', project: 'Shop-App' });
    await mcp.tool('mem_save', { title: 'Drift 2', content: 'And another spelling.', project: 'shop--app' });
    expect((await mcp.tool('mem_merge_projects', { from: 'Shop-App, shop--app', to: 'shop' })).text).toBe(
      'Merged 1 source(s) into "shop":\n  Observations moved: 2\n  Sessions moved:     1\n  Prompts moved:      0\n',
    );
    expect((await mcp.tool('mem_stats')).text).toBe('Memory System Stats:\n- Sessions: 3\n- Observations: 9\n- Prompts: 1\n- Projects: shop');
  });
});

describe("Engram's tools", () => {
  it('add, search (ranks, score, abstention), update, deprecate, feedback once per session, pin, list, status, explain', async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    const added = JSON.parse((await mcp.tool('engram_add', { text: 'Run npm run build before npm test: the e2e tests import dist bundles.', category: 'testing', tags: ['npm'], project: 'shop' })).text);
    expect(added).toMatchObject({ status: 'created', id: 1, engram: { category: 'testing', tags: ['npm'], project: 'shop', scope: 'project' }, redacted: [] });
    const secret = JSON.parse((await mcp.tool('engram_add', { text: 'Deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789 <private>do not keep</private> only from CI.' })).text);
    expect(secret.engram.text).not.toMatch(/ghp_|do not keep/);
    expect(secret.redacted.length).toBeGreaterThan(0);
    const duplicate = JSON.parse((await mcp.tool('engram_add', { text: 'Run npm run build before npm test: the e2e tests import dist bundles.', project: 'shop' })).text);
    expect(duplicate).toMatchObject({ status: 'duplicate', id: 1 });

    const search = JSON.parse((await mcp.tool('engram_search', { query: 'npm test dist bundles' })).text);
    expect(search).toMatchObject({ abstained: null, results: [{ id: 1, text: expect.stringContaining('npm run build'), tags: ['npm'], ranks: { bm25: 1 } }] });
    expect(search.results[0].score).toBeGreaterThan(0);
    expect(JSON.parse((await mcp.tool('engram_search', { query: 'ok thanks' })).text)).toMatchObject({ abstained: 'no-content', results: [] });

    expect(JSON.parse((await mcp.tool('engram_update', { id: 1, add_tags: ['ci'] })).text)).toMatchObject({ status: 'updated', changed: ['tags'], engram: { tags: ['ci', 'npm'] } });
    expect(JSON.parse((await mcp.tool('engram_pin', { id: 1 })).text)).toMatchObject({ status: 'updated', pinned: true });
    expect(JSON.parse((await mcp.tool('engram_unpin', { id: 1 })).text)).toMatchObject({ status: 'updated', pinned: false });

    const feedback = JSON.parse((await mcp.tool('engram_feedback', { id: 1, applicable: true, reason: 'it saved a failing run' })).text);
    expect(feedback).toMatchObject({ status: 'recorded', engram_id: 1, useful: true, matched: true, repo: 'shop' });
    expect(feedback.session_id).toMatch(/^mcp-/);
    expect(JSON.parse((await mcp.tool('engram_feedback', { id: 1, applicable: false })).text)).toMatchObject({ status: 'already_recorded', useful: true });
    const store = openStore({ path: `${home}/engram.db`, readonly: true });
    try {
      expect(store.engrams.get(1)?.times_matched).toBe(1);
      expect(store.stats.get(1).repos).toEqual([expect.objectContaining({ repo: 'shop', times_matched: 1 })]);
      expect(store.activity.judgements(feedback.session_id)).toEqual([
        expect.objectContaining({ engram_id: 1, source: 'feedback', score: 3, evidence: 'it saved a failing run', judged_by: 'agent' }),
      ]);
    } finally {
      store.close();
    }

    expect(JSON.parse((await mcp.tool('engram_deprecate', { id: 2, reason: 'CI uses OIDC now' })).text)).toMatchObject({ status: 'updated', deprecated: true, reason: 'CI uses OIDC now' });
    expect(JSON.parse((await mcp.tool('engram_list', {})).text)).toMatchObject({ total: 1, engrams: [{ id: 1 }] });
    expect(JSON.parse((await mcp.tool('engram_list', { include_deprecated: true })).text)).toMatchObject({ total: 2 });
    const status = JSON.parse((await mcp.tool('engram_status')).text);
    expect(status).toMatchObject({ engrams: { active: 1, deprecated: 1 }, environment: { project: 'shop' } });

    // Explain: a recorded session wrote a file; the lines it wrote lead back to its tape.
    const recorded = await recordTranscript({ path: join(SHARED, 'fixtures', 'transcripts', 'codex-0.169.0__scripted-session.jsonl'), cwd: project, home });
    const tape = recorded.tapes[0]!;
    const edit = readTape(tape.path).events.find((event): event is CodeEditEvent => event.k === 'code.edit' && (event.after_text ?? '').trim().length > 15)!;
    mkdirSync(dirname(join(project, edit.file)), { recursive: true });
    writeFileSync(join(project, edit.file), edit.after_text!);
    const lines = edit.after_text!.split('\n').filter((line, i, all) => i < all.length - 1 || line !== '').length;
    const explained = JSON.parse((await mcp.tool('engram_explain', { span: `${edit.file}:1-${lines}`, brief: true })).text);
    expect(explained).toMatchObject({ span: { file: edit.file, start: 1, end: lines }, results: [{ tape_id: tape.tape_id }] });
    const missing = await mcp.tool('engram_explain', { span: 'missing.ts:1-2' });
    expect(missing).toMatchObject({ isError: true, text: expect.stringMatching(/^NOT_FOUND: /) });
    expect(await mcp.tool('engram_explain', { span: 'no-line-numbers' })).toEqual({ text: 'INVALID_INPUT: span must be file:start-end, e.g. src/auth.ts:42-60; got "no-line-numbers"', isError: true });
  });
});

describe('one store, one review gate', () => {
  it("an agent's save is an engram: its own searches find it at once, hooks inject it only after a person approves it", async () => {
    const { home, project } = workspace();
    const mcp = await connect(home, { cwd: project });
    await mcp.tool('mem_save', { title: 'Deploy lock', content: 'A deploy fails when the migration lock is still held; release it with npm run unlock first.', type: 'bugfix' });
    const lesson = JSON.parse((await mcp.tool('engram_add', { text: 'Staging deploys run from the release branch only.', project: 'shop' })).text);
    expect(lesson.engram).toMatchObject({ status: 'pending', status_reason: expect.stringMatching(/waits for review/) });
    const viaEngram = JSON.parse((await mcp.tool('engram_search', { query: 'deploy migration lock' })).text);
    expect(viaEngram.results[0]).toMatchObject({ id: 1, kind: 'bugfix', category: 'bugfix', project: 'shop', status: 'pending' });
    expect((await mcp.tool('mem_search', { query: 'staging deploys release branch' })).text).toContain(`#${lesson.id} (lesson) — Staging deploys run from the release branch only.`);
    await mcp.close();

    const prompt = JSON.stringify({ session_id: 'hook-1', transcript_path: '/tmp/t.jsonl', cwd: project, hook_event_name: 'UserPromptSubmit', prompt: 'why does the deploy fail on the migration lock?' });
    const before = await hookProcess('user-prompt-submit', prompt, { home });
    expect(before.code).toBe(0);
    expect(before.stdout).not.toContain('EG#1');

    // A person approves it at the command line: the next session is shown it.
    const approved = engramProcess(['approve', '1'], { home, cwd: project });
    expect(approved.status, approved.stderr).toBe(0);
    const after = await hookProcess('user-prompt-submit', prompt.replace('hook-1', 'hook-2'), { home });
    expect(after.stdout).toContain('EG#1 [bugfix] Deploy lock: A deploy fails when the migration lock is still held');
  });
});
