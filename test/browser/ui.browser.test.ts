/**
 * The viewer in a real browser: Debian's headless Chromium driven by playwright-core, against the real `engram ui`
 * (bin/engram → the warm server it starts → the page from dist/ui) over a real store in a temporary home. Each screen
 * is opened, acted on (pin, edit, search, approve, undo, page the queue, open a session, open a tape, explain a span
 * and land on the moment of its edit, follow an engram's provenance into its tape) and checked on the page and then in
 * the store; a request without the launch's secret is refused. Screenshots of each screen go to the test's temporary
 * folder. The session is real activity: the scripted Claude Code session's hook payloads (../shared/fixtures/
 * hook-payloads) replayed through the real hook launcher, its transcript recorded as a tape (services/tape), judged by
 * the evaluator and mined by extraction against a fake OpenAI-compatible server on 127.0.0.1 (no model runs here), and
 * feedback moving tag relevance through the learning service.
 *
 * Run alone: npx vitest run --project browser. Needs /usr/bin/chromium (`apt-get install -y chromium`; .ci/run does).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createLlmClient, openStore } from '../../src/core/index.js';
import { addEngram, evaluateSession, extractSession, initRepo, loadTapes, momentSource, readTape, recordFeedback, recordTranscript, type CodeEditEvent } from '../../src/services/index.js';
import { completion, fakeOpenAi, llmSettings } from '../core/llm/_fakes.js';
import { engramProcess, hookProcess, SHARED, stopServer } from '../_helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[engram tests] no Chromium at ${CHROMIUM}: the viewer's browser tests are skipped (apt-get install -y chromium)`);

// One home for the whole file (tempDir's are removed after each test): removed in afterAll.
const home = mkdtempSync(join(tmpdir(), 'engram-ui-'));
const shots = join(home, 'screenshots');
const env = { ENGRAM_PORT: '0', ENGRAM_EMBEDDER: 'none' };
let browser: Browser;
let page: Page;
let url: string;
let origin: string;
let ids: { pinMe: number; pendingA: number; pendingB: number; conflict: number; retry: number; learned: number };
// The scripted Claude Code session: its transcript fixture and the hook payloads of the same run (whose own session
// id and paths are replaced by this one's and the test repository's).
const SESSION = 'f62cb199-5524-4dac-8011-3b74b972172a';
const TRANSCRIPT = join(SHARED, 'fixtures', 'transcripts', 'claude-code-2.1.197__scripted-session.jsonl');
const PAYLOADS = join(SHARED, 'fixtures', 'hook-payloads', 'claude-code-2.1.197');
const CODEX_SESSION = '01a200c5-e3f5-7893-a481-82c60fff87ef';
const CODEX_TRANSCRIPT = join(SHARED, 'fixtures', 'transcripts', 'codex-0.169.0__scripted-session.jsonl');
const repo = join(home, 'proj');
const plain = join(home, 'elsewhere');
let tapes: { claude: string; codex: string };

/** One engram's row as the store file holds it now (the server writes it; WAL lets this connection read). */
function row(id: number): { pinned: number; status: string; text: string } | undefined {
  const db = new Database(join(home, 'engram.db'), { readonly: true });
  try {
    return db.prepare('SELECT pinned, status, text FROM engrams WHERE id = ? AND deleted_at IS NULL').get(id) as { pinned: number; status: string; text: string } | undefined;
  } finally {
    db.close();
  }
}

function auditByHttp(): Array<{ actor: string; op: string }> {
  const db = new Database(join(home, 'engram.db'), { readonly: true });
  try {
    return db.prepare("SELECT actor, op FROM audit_log WHERE via = 'http' ORDER BY seq").all() as Array<{ actor: string; op: string }>;
  } finally {
    db.close();
  }
}

/** Reads until the assertion holds or 20 s pass (the machine is shared; a page may take more than a second). */
async function eventually<T>(read: () => Promise<T> | T, assert: (value: T) => void, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    try {
      assert(value);
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        // What the page showed instead, for the failure message.
        console.error(`page at ${page.url()}:\n${(await page.locator('main').innerText().catch(() => '')).slice(0, 2000)}`);
        throw error;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

describe.skipIf(!hasChromium)('engram ui in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    const store = openStore({ path: join(home, 'engram.db') });
    const harvest = { by: 'harvest', via: 'job' } as const;
    try {
      const texts = [
        ['Use pnpm, not npm, in the shop repository: the lockfile is pnpm-lock.yaml.', 'development/node', ['node', 'pnpm']],
        ['Run make migrate before the integration tests, or they fail on a missing table.', 'development', ['make', 'postgres']],
        ['The staging cluster is reset every Monday at 02:00 UTC; do not keep data there.', 'ops', ['staging']],
        ['Feature flags live in config/flags.yaml of the web app and need a deploy to change.', 'development/web', ['flags']],
        ['Prefer structured logging with pino; console.log is stripped in production builds.', 'development/node', ['node', 'logging']],
        ['The CI cache key includes the Node major version; bump it when upgrading Node.', 'ci', ['ci', 'node']],
      ] as const;
      const added = texts.map(([text, category, tags]) => addEngram(store, { text, category, tags: [...tags], project: 'shop' }).engram);
      const pendingA = addEngram(store, { text: 'Always run the full e2e suite before pushing a branch to main.', tags: ['ci'] }, { actor: harvest }).engram;
      const pendingB = addEngram(store, { text: 'Database backups are kept for fourteen days in the eu-west bucket.', tags: ['ops'] }, { actor: harvest }).engram;
      const conflict = addEngram(store, { text: 'Use npm, not pnpm, in the shop repository.', tags: ['node'], project: 'shop' }, { actor: harvest }).engram;
      const retry = addEngram(store, { text: 'Retry helpers in this project live in src/retry.py and make 5 attempts before giving up.', category: 'development', tags: ['python'], project: 'proj' }).engram;
      addEngram(store, { text: 'Record every change of behaviour in notes.md at the repository root, one line per change.', category: 'development', tags: ['docs'], project: 'proj' });
      ids = { pinMe: (added[1] as { id: number }).id, pendingA: pendingA.id, pendingB: pendingB.id, conflict: conflict.id, retry: retry.id, learned: 0 };
    } finally {
      store.close();
    }

    // The session's hooks, through the real launcher (in-process: the server starts with `engram ui` below).
    mkdirSync(join(repo, 'src'), { recursive: true });
    mkdirSync(plain, { recursive: true });
    // A git repository (its name is the session's project) that opted in to tapes.
    execFileSync('git', ['init', '-q', repo]);
    initRepo({ cwd: repo });
    const payload = (name: string): string => {
      const raw = JSON.parse(readFileSync(join(PAYLOADS, `${name}.json`), 'utf8')) as { session_id: string };
      return JSON.stringify(raw).replaceAll(raw.session_id, SESSION).replaceAll('/home/user/.claude/projects/-home-user-proj/' + SESSION + '.jsonl', TRANSCRIPT).replaceAll('/home/user/proj', repo);
    };
    // A Codex session in the other folder, from its own SessionStart payload.
    const codexStart = JSON.parse(readFileSync(join(SHARED, 'fixtures', 'hook-payloads', 'codex-0.169.0', 'SessionStart.startup.json'), 'utf8')) as Record<string, unknown>;
    const codexHook = await hookProcess('session-start', JSON.stringify({ ...codexStart, session_id: CODEX_SESSION, transcript_path: CODEX_TRANSCRIPT, cwd: plain }), { home, env, agent: 'codex' });
    expect(codexHook.code, codexHook.stderr).toBe(0);
    for (const [entry, name] of [
      ['session-start', 'SessionStart.startup'],
      ['user-prompt-submit', 'UserPromptSubmit'],
      ['pre-tool-use', 'PreToolUse.Write'],
      ['post-tool-use', 'PostToolUse.Write'],
      ['post-tool-use-failure', 'PostToolUseFailure.Bash'],
      ['stop', 'Stop'],
    ] as const) {
      const hook = await hookProcess(entry, payload(name), { home, env });
      expect(hook.code, `${entry}: ${hook.stderr}`).toBe(0);
    }

    // Its tape (an opted-in repository: .engram/tapes), and another agent's session in a folder that did not opt in
    // (its tape under $ENGRAM_HOME/tapes/<project>).
    const claude = await recordTranscript({ path: TRANSCRIPT, cwd: repo, home });
    const codex = await recordTranscript({ path: CODEX_TRANSCRIPT, cwd: plain, home });
    tapes = { claude: claude.tapes[0]?.tape_id as string, codex: codex.tapes[0]?.tape_id as string };

    // The evaluator judges what was shown; extraction learns a lesson with its moment in the tape; feedback moves the
    // learned relevance over time. Fake model servers answer (a real LLM cannot run here).
    const learnStore = openStore({ path: join(home, 'engram.db') });
    try {
      const judge = await fakeOpenAi([completion(JSON.stringify({ score: 3, evidence: 'Add a small retry helper in src/retry.py with 5 attempts' }))]);
      const lesson = { text: 'In this project, src/missing.py does not exist: list src before reading files there.', kind: 'struggle', scope: 'project', evidence: 'Add a small retry helper in src/retry.py with 5 attempts' };
      const miner = await fakeOpenAi((request) => completion(JSON.stringify({ engrams: String(request.body?.messages?.at(-1)?.content ?? '').includes('retry') ? [lesson] : [] })));
      const evaluated = await evaluateSession(learnStore, SESSION, { llm: createLlmClient(llmSettings({ base_url: judge.baseUrl, model: 'judge' }), { store: learnStore }) });
      expect(evaluated.outcome).toBe('completed');
      const recorded = loadTapes(repo, home, claude.tapes.map((tape) => tape.tape_id));
      const report = await extractSession(
        learnStore,
        { sessionId: SESSION, transcriptPath: TRANSCRIPT, repo: 'proj', cwd: repo, envTags: [], mcpServers: [], tapes: claude.tapes.map((tape) => tape.tape_id) },
        { llm: createLlmClient(llmSettings({ base_url: miner.baseUrl, model: 'miner' }), { store: learnStore }), provenance: (quote, text) => momentSource(recorded, quote, text, { sessionId: SESSION, cwd: repo }) },
      );
      ids.learned = report.lessons.find((outcome) => outcome.engram_id)?.engram_id as number;
      expect(ids.learned, JSON.stringify(report)).toBeGreaterThan(0);
      for (const [day, useful] of [[1, true], [2, false], [3, true]] as const) {
        recordFeedback(learnStore, ids.retry, useful, { tags: ['python'], reason: useful ? 'it was the right file' : 'not needed for this change', now: () => new Date(Date.UTC(2026, 10, 20 + day)) });
      }
    } finally {
      learnStore.close();
    }
    const launched = engramProcess(['ui', '--no-open'], { home, env });
    expect(launched.status, launched.stderr).toBe(0);
    const answer = JSON.parse(launched.stdout) as { url: string; origin: string; opened: boolean };
    expect(answer.opened).toBe(false);
    expect(answer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/#[A-Za-z0-9_-]{32}$/);
    url = answer.url;
    origin = answer.origin;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stopServer(home);
    // ENGRAM_UI_KEEP=1 keeps the home with its screenshots to look at.
    if (!process.env.ENGRAM_UI_KEEP) rmSync(home, { recursive: true, force: true });
  });

  it('refuses the API without the launch secret, from a program and from a page of another origin', async () => {
    const plain = await fetch(`${origin}/ui/api/engrams`);
    expect(plain.status).toBe(401);
    const forged = await fetch(`${origin}/ui/api/engrams/${ids.pinMe}/pin`, { method: 'POST', headers: { 'x-engram-ui': 'guess', 'content-type': 'application/json' }, body: '{"pinned":true}' });
    expect(forged.status).toBe(401);
    // The page itself, opened without the secret in its link, cannot read anything either.
    const stranger = await browser.newPage();
    await stranger.goto(`${origin}/ui/#engrams`);
    await eventually(() => stranger.locator('[role=alert]').first().textContent(), (value) => expect(value).toContain('run `engram ui` again'));
    await stranger.close();
    // Headless Chromium throttles a window behind another; the main page comes back to the front.
    await page.bringToFront();
    expect(row(ids.pinMe)?.pinned).toBe(0);
    // A second launch hands out another secret; both work.
    const again = JSON.parse(engramProcess(['ui', '--no-open'], { home, env }).stdout) as { url: string; origin: string };
    expect(again.origin).toBe(origin);
    expect(again.url).not.toBe(url);
    const secret = again.url.split('#')[1] as string;
    expect((await fetch(`${origin}/ui/api/engrams`, { headers: { 'x-engram-ui': secret } })).status).toBe(200);
  });

  it('Engrams: lists with filters, shows an engram, pins and edits it, and the store follows', async () => {
    await page.goto(url);
    await page.waitForSelector('body[data-ready=engrams]');
    // The secret left the address bar.
    expect(page.url()).toBe(`${origin}/ui/#engrams`);
    // Six active and three pending seeded, two lessons of the session's project, and the one extraction learned (pending).
    await eventually(() => page.locator('#engram-list tr[data-id]').count(), (value) => expect(value).toBe(12));
    await page.selectOption('select[name=status]', 'pending');
    await eventually(() => page.locator('#engram-list tr[data-id]').count(), (value) => expect(value).toBe(4));
    await page.selectOption('select[name=status]', 'active');
    await page.selectOption('select[name=tag]', 'node');
    await eventually(() => page.locator('#engram-list tr[data-id]').count(), (value) => expect(value).toBe(3));
    await page.selectOption('select[name=tag]', '');
    await page.locator(`#engram-list tr[data-id="${ids.pinMe}"]`).click();
    await eventually(() => page.locator('#detail-text').textContent(), (value) => expect(value).toContain('make migrate'));
    await page.click('#pin');
    await eventually(() => page.locator('#pin').textContent(), (value) => expect(value).toBe('Unpin'));
    expect(row(ids.pinMe)?.pinned).toBe(1);
    await page.click('#edit');
    await page.fill('#editor textarea[name=text]', 'Run make migrate before the integration tests (they fail on a missing table otherwise).');
    await page.click('#editor button[type=submit]');
    await eventually(() => page.locator('#detail-text').textContent(), (value) => expect(value).toContain('otherwise'));
    expect(row(ids.pinMe)?.text).toBe('Run make migrate before the integration tests (they fail on a missing table otherwise).');
    await eventually(() => page.locator('#history li').allTextContents(), (value) => expect(value).toEqual(expect.arrayContaining([expect.stringContaining('pin by user via http'), expect.stringContaining('edit by user via http')])));
    // Keyboard: j moves through the list, Enter opens.
    const second = await page.locator('#engram-list tr[data-id]').nth(1).getAttribute('data-id');
    await page.locator('#engram-list tr[data-id]').first().focus();
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await eventually(() => page.locator('#engram-list tr[aria-selected=true]').getAttribute('data-id'), (value) => expect(value).toBe(second));
    await shot('engrams');
    await page.setViewportSize({ width: 480, height: 800 });
    await shot('engrams-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('Search: shows each result’s BM25 rank, fused score and adjustments, and the abstain verdict', async () => {
    await page.keyboard.press('2');
    await page.waitForSelector('body[data-ready=search]');
    await page.fill('#q', 'pnpm lockfile shop repository');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#search-table tbody tr');
    const first = page.locator('#search-table tbody tr').first();
    await eventually(() => first.getAttribute('data-id'), (value) => expect(value).toBe('1'));
    const cells = await first.locator('td').allTextContents();
    expect(cells[2]).toMatch(/^1 \(/); // BM25 rank 1 with its score
    expect(Number(cells[4])).toBeGreaterThan(0); // fused score
    expect(await page.locator('#verdict').textContent()).toContain('The hooks would answer');
    await shot('search');
    await page.fill('#q', 'kubernetes helm chart values');
    await page.keyboard.press('Enter');
    await eventually(() => page.locator('#verdict').textContent(), (value) => expect(value).toContain('would stay silent'));
  });

  it('Review: approves with evidence beside it, undoes it, and forgets; the store follows', async () => {
    await page.click('nav a[data-screen=review]');
    await page.waitForSelector('body[data-ready=review]');
    // The three pending seeded and the lesson extraction learned.
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(4));
    expect(await page.locator('#review-count').textContent()).toBe('4');
    await shot('review');
    await page.click(`button[data-action=approve][data-id="${ids.pendingA}"]`);
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(3));
    expect(row(ids.pendingA)?.status).toBe('active');
    await page.click('#undo');
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(4));
    expect(row(ids.pendingA)?.status).toBe('pending');
    await page.click(`button[data-action=forget][data-id="${ids.pendingB}"]`);
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(3));
    expect(row(ids.pendingB)).toBeUndefined();
    // The contradiction is settled beside both texts: approving the newcomer retires the engram it contradicts.
    await page.click(`button[data-action=approve-supersede][data-id="${ids.conflict}"]`);
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(2));
    expect(row(ids.conflict)?.status).toBe('active');
    expect(row(1)?.status).toBe('deprecated');
    expect(auditByHttp()).toEqual(expect.arrayContaining([{ actor: 'user', op: 'approve' }, { actor: 'user', op: 'forget' }]));
  });

  it('Review: pages a queue longer than a page on the server, and a decision on page two reaches the store', async () => {
    // Sixty more wait (written by another process, as extraction would): the queue no longer fits one page of 50.
    const store = openStore({ path: join(home, 'engram.db') });
    const queued: number[] = [];
    try {
      for (let i = 0; i < 60; i++) queued.push(addEngram(store, { text: `Queued lesson n${i}x about worker w${i}y and its queue q${i}z.` }, { actor: { by: 'harvest', via: 'job' } }).engram.id);
    } finally {
      store.close();
    }
    await page.click('nav a[data-screen=engrams]');
    await page.waitForSelector('body[data-ready=engrams]');
    await page.click('nav a[data-screen=review]');
    await page.waitForSelector('body[data-ready=review]');
    await eventually(() => page.locator('#review-pager .page-info').textContent(), (value) => expect(value).toBe('1–50 of 62'));
    expect(await page.locator('main article.card').count()).toBe(50);
    await page.click('#review-pager button.next');
    await eventually(() => page.locator('#review-pager .page-info').textContent(), (value) => expect(value).toBe('51–62 of 62'));
    const onSecond = (await page.locator('main article.card').evaluateAll((cards) => cards.map((card) => Number(card.getAttribute('data-id'))))) as number[];
    expect(onSecond).toHaveLength(12);
    const last = queued.at(-1) as number;
    expect(onSecond).toContain(last);
    await shot('review-page-2');
    await page.click(`button[data-action=approve][data-id="${last}"]`);
    await eventually(() => page.locator('#review-pager .page-info').textContent(), (value) => expect(value).toBe('51–61 of 61'));
    expect(row(last)?.status).toBe('active');
  });

  it('Sessions: lists the session, and shows what the hooks injected, what the evaluator judged, what was learned, its prompts and tapes', async () => {
    await page.click('nav a[data-screen=sessions]');
    await page.waitForSelector('body[data-ready=sessions]');
    // Newest first: the Codex session started before the Claude Code one.
    await eventually(() => page.locator('#session-list tr.nav-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key'))), (value) => expect(value).toEqual([SESSION, CODEX_SESSION]));
    await page.selectOption('select[name=agent]', 'codex');
    await eventually(() => page.locator('#session-list tr.nav-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key'))), (value) => expect(value).toEqual([CODEX_SESSION]));
    await page.selectOption('select[name=agent]', 'claude');
    await eventually(() => page.locator('#session-list tr.nav-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key'))), (value) => expect(value).toEqual([SESSION]));
    // Keyboard: focus the row and open it with Enter.
    await page.locator('#session-list tr.nav-row').first().focus();
    await page.keyboard.press('Enter');
    await eventually(() => page.locator('#session-id').textContent(), (value) => expect(value).toBe(SESSION));
    const db = new Database(join(home, 'engram.db'), { readonly: true });
    let shown: Array<{ engram_id: number; event: string }>;
    let judged: Array<{ engram_id: number; score: number; evidence: string }>;
    try {
      shown = db.prepare('SELECT engram_id, event FROM session_shown_engrams WHERE session_id = ?').all(SESSION) as typeof shown;
      judged = db.prepare('SELECT engram_id, score, evidence FROM engram_judgements WHERE session_id = ?').all(SESSION) as typeof judged;
    } finally {
      db.close();
    }
    // What the page shows is what the store holds: every injected engram under its hook event, every judgement.
    expect(shown.map((s) => s.engram_id)).toContain(ids.retry);
    const injected = await page.locator('.injection').evaluateAll((cards) => cards.flatMap((card) => [...card.querySelectorAll('tr[data-id]')].map((row) => `${card.getAttribute('data-event')}:${row.getAttribute('data-id')}`)));
    expect(injected.sort()).toEqual(shown.map((s) => `${s.event}:${s.engram_id}`).sort());
    const judgedOnPage = await page.locator('#judgements li').evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-id'))));
    expect(judgedOnPage.sort()).toEqual(judged.map((j) => j.engram_id).sort());
    expect(await page.locator('#judgements').textContent()).toContain(judged[0]?.evidence as string);
    expect(await page.locator(`#extracted li[data-id="${ids.learned}"]`).textContent()).toContain('pending');
    expect(await page.locator('#session-tapes a.tape-link').first().getAttribute('data-tape')).toBe(tapes.claude);
    expect(await page.locator('#session-prompts').textContent()).toContain('retry helper');
    expect(await page.locator('#tools-table tbody tr').count()).toBeGreaterThan(0);
    await shot('sessions');
    await page.setViewportSize({ width: 480, height: 800 });
    await shot('sessions-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
    // From the session to its tape.
    await page.locator('#session-tapes a.tape-link').first().click();
    await page.waitForSelector('body[data-ready=tapes]');
    await eventually(() => page.locator('#tape-id').textContent(), (value) => expect(value).toBe(tapes.claude.slice(0, 16)));
  });

  it('Tapes and explain: lists both folders’ tapes, and explaining a span lands on the moment of its edit in the tape', async () => {
    await page.click('nav a[data-screen=tapes]');
    await page.waitForSelector('body[data-ready=tapes]');
    await eventually(() => page.locator('#tape-list tr.nav-row').count(), (value) => expect(value).toBeGreaterThanOrEqual(2));
    const listed = await page.locator('#tape-list tr.nav-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));
    expect(listed).toEqual(expect.arrayContaining([tapes.claude, tapes.codex]));
    // The code the session wrote is in the working tree; explain it.
    const tape = readTape(join(repo, '.engram', 'tapes', `${tapes.claude}.jsonl.zst`));
    const edits = tape.events.map((event, offset) => ({ event, offset })).filter((item): item is { event: CodeEditEvent; offset: number } => item.event.k === 'code.edit' && item.event.file.endsWith('retry.py'));
    const written = edits.at(-1) as { event: CodeEditEvent; offset: number };
    const text = (written.event.after_text as string).replace(/\n$/, '');
    writeFileSync(join(repo, 'src', 'retry.py'), `${text}\n`);
    await page.selectOption('select[name=root]', repo);
    await page.fill('#span', `src/retry.py:1-${text.split('\n').length}`);
    await page.keyboard.press('Enter');
    await eventually(() => page.locator(`#explain-results li[data-tape="${tapes.claude}"]`).count(), (value) => expect(value).toBe(1));
    const link = page.locator(`#explain-results li[data-tape="${tapes.claude}"] a.touch-link.edit`).first();
    const offset = Number(await link.getAttribute('data-offset'));
    await link.click();
    await eventually(() => page.locator('#events li.hl').first().getAttribute('data-offset'), (value) => expect(value).toBe(String(offset)));
    // The moment is on screen and is an edit of that file, as the tape in the repository records it.
    const highlighted = page.locator('#events li.hl').first();
    expect(await highlighted.getAttribute('data-kind')).toBe('code.edit');
    expect(await highlighted.locator('code.edit-file').textContent()).toContain('retry.py');
    expect(tape.events[offset]?.k).toBe('code.edit');
    expect(edits.map((edit) => edit.offset)).toContain(offset);
    const box = await highlighted.boundingBox();
    expect(box && box.y >= 0 && box.y < 800).toBe(true);
    await shot('tapes');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('tapes-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('Engram detail: relevance over time as a chart per tag, pin history, and the provenance link opens the tape moment', async () => {
    await page.goto(`${origin}/ui/#engrams?id=${ids.retry}`);
    await page.waitForSelector('body[data-ready=engrams]');
    await eventually(() => page.locator('#detail-text').textContent(), (value) => expect(value).toContain('src/retry.py'));
    const db = new Database(join(home, 'engram.db'), { readonly: true });
    let moves: Array<{ tag: string; n: number }>;
    let source: { tape_id: string; event_from: number; event_to: number };
    try {
      moves = db.prepare('SELECT tag, count(*) AS n FROM engram_tag_relevance_history WHERE engram_id = ? GROUP BY tag ORDER BY tag').all(ids.retry) as typeof moves;
      source = db.prepare('SELECT tape_id, event_from, event_to FROM engram_sources WHERE engram_id = ?').get(ids.learned) as typeof source;
    } finally {
      db.close();
    }
    // One chart per tag whose relevance moved, one point per recorded move (the evaluator's and three feedbacks).
    expect(moves.find((m) => m.tag === 'python')?.n).toBe(3);
    for (const move of moves) expect(await page.locator(`svg.spark[data-tag="${move.tag}"] circle`).count()).toBe(move.n);
    await page.click('#pin');
    await eventually(() => page.locator('#pin-history li').count(), (value) => expect(value).toBe(1));
    expect(await page.locator('#pin-history li').first().textContent()).toContain('pinned by a person via http');
    await shot('engram-detail');
    // The lesson extraction learned names its moment; the link opens the tape there.
    await page.goto(`${origin}/ui/#engrams?id=${ids.learned}`);
    await page.waitForSelector('body[data-ready=engrams]');
    await eventually(() => page.locator('a.moment-link').count(), (value) => expect(value).toBe(1));
    expect(source.tape_id).toBe(tapes.claude);
    await page.click('a.moment-link');
    await page.waitForSelector('body[data-ready=tapes]');
    await eventually(() => page.locator('#events li.hl').evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-offset')))), (value) =>
      expect(value).toEqual(Array.from({ length: source.event_to - source.event_from + 1 }, (_, i) => source.event_from + i).filter((offset) => offset < 200)),
    );
  });

  it('Health: shows engram doctor as a page', async () => {
    await page.click('nav a[data-screen=health]');
    await page.waitForSelector('body[data-ready=health]', { timeout: 60_000 });
    expect(await page.locator('#health-status').textContent()).toMatch(/^(ok|degraded|error)$/);
    const names = await page.locator('#checks tbody td:first-child').allTextContents();
    expect(names).toEqual(expect.arrayContaining(['node', 'sqlite']));
    await shot('health');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.click('nav a[data-screen=engrams]');
    await page.waitForSelector('body[data-ready=engrams]');
    await shot('engrams-dark');
    expect(existsSync(join(shots, 'engrams.png'))).toBe(true);
  });
});
