/**
 * The viewer in a real browser: Debian's headless Chromium driven by playwright-core, against the real `engram ui`
 * (bin/engram → the warm server it starts → the page from dist/ui) over a real store in a temporary home. Each screen
 * is opened, acted on (pin, edit, search, approve, undo, health) and checked on the page and then in the store; a
 * request without the launch's secret is refused. Screenshots of each screen go to the test's temporary folder.
 *
 * Run alone: npx vitest run --project browser. Needs /usr/bin/chromium (`apt-get install -y chromium`; .ci/run does).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openStore } from '../../src/core/index.js';
import { addEngram } from '../../src/services/index.js';
import { engramProcess, stopServer } from '../_helpers.js';

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
let ids: { pinMe: number; pendingA: number; pendingB: number; conflict: number };

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
      ids = { pinMe: (added[1] as { id: number }).id, pendingA: pendingA.id, pendingB: pendingB.id, conflict: conflict.id };
    } finally {
      store.close();
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
  }, 120_000);

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
    await eventually(() => page.locator('#engram-list tr[data-id]').count(), (value) => expect(value).toBe(9));
    await page.selectOption('select[name=status]', 'pending');
    await eventually(() => page.locator('#engram-list tr[data-id]').count(), (value) => expect(value).toBe(3));
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
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(3));
    expect(await page.locator('#review-count').textContent()).toBe('3');
    await shot('review');
    await page.click(`button[data-action=approve][data-id="${ids.pendingA}"]`);
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(2));
    expect(row(ids.pendingA)?.status).toBe('active');
    await page.click('#undo');
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(3));
    expect(row(ids.pendingA)?.status).toBe('pending');
    await page.click(`button[data-action=forget][data-id="${ids.pendingB}"]`);
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(2));
    expect(row(ids.pendingB)).toBeUndefined();
    // The contradiction is settled beside both texts: approving the newcomer retires the engram it contradicts.
    await page.click(`button[data-action=approve-supersede][data-id="${ids.conflict}"]`);
    await eventually(() => page.locator('main article.card').count(), (value) => expect(value).toBe(1));
    expect(row(ids.conflict)?.status).toBe('active');
    expect(row(1)?.status).toBe('deprecated');
    expect(auditByHttp()).toEqual(expect.arrayContaining([{ actor: 'user', op: 'approve' }, { actor: 'user', op: 'forget' }]));
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
