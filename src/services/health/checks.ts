import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  loadEmbedder,
  loadSettings,
  loadSqlite,
  loadVectorExtension,
  openStore,
  quietly,
  resolveEmbedder,
  SCHEMA_VERSION,
  vectorModelId,
  type EngramEnv,
  type Settings,
} from '../../core/index.js';
import { checkInstall, readBootstrapState } from '../../../scripts/install-state.mjs';
import { embeddingStatus } from '../recall/index.js';
import { checkClaude, checkCodex } from './agents.js';
import { installStatus } from './install.js';
import { checkClaudeMcp, checkCodexMcp, checkMcpStarts } from './mcp.js';
import type { Check, DoctorReport } from './report.js';

const attempt = (name: string, fn: () => Check): Check => {
  try {
    return fn();
  } catch (error) {
    return { name, status: 'error', detail: (error as Error).message };
  }
};

function checkNode(): Check {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > 20 || (major === 20 && minor >= 19);
  return {
    name: 'node',
    status: ok ? 'ok' : 'error',
    detail: `Node ${process.versions.node}${ok ? '' : '; Engram needs Node 20.19 or newer'}`,
  };
}

function checkHome(settings: Settings): Check {
  const home = settings.paths.home;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  accessSync(home, constants.W_OK);
  const mode = statSync(home).mode & 0o777;
  return {
    name: 'home',
    status: 'ok',
    detail: `${home} is writable${mode & 0o077 ? ` (mode ${mode.toString(8)}: readable by others; chmod 700 recommended)` : ''}`,
  };
}

function checkSqlite(): Check {
  const Sqlite = loadSqlite();
  const db = new Sqlite(':memory:');
  try {
    const version = String(db.prepare('select sqlite_version()').pluck().get());
    return { name: 'sqlite', status: 'ok', detail: `better-sqlite3 loads; SQLite ${version}` };
  } finally {
    db.close();
  }
}

function checkVectors(): Check {
  const db = new (loadSqlite())(':memory:');
  try {
    return { name: 'sqlite_vec', status: 'ok', detail: `sqlite-vec ${loadVectorExtension(db)} loads` };
  } catch (error) {
    return { name: 'sqlite_vec', status: 'degraded', detail: `${(error as Error).message}; vector search is unavailable` };
  } finally {
    db.close();
  }
}

function checkStore(settings: Settings): Check {
  const store = openStore({ path: settings.paths.db, busyTimeoutMs: settings.config.store.busy_timeout_ms });
  try {
    const integrity = String(store.db.pragma('quick_check', { simple: true }));
    const mode = String(store.db.pragma('journal_mode', { simple: true }));
    const applied = store.migration.applied.length ? `; migrated ${store.migration.applied.join(', ')}` : '';
    const ok = integrity === 'ok' && mode === 'wal';
    return {
      name: 'store',
      status: ok ? 'ok' : 'error',
      detail: `${settings.paths.db}: schema ${store.migration.to}/${SCHEMA_VERSION}, journal ${mode}, quick_check ${integrity}${applied}`,
    };
  } finally {
    store.close();
  }
}

function checkInstallFolder(root: string, home: string, vars: Record<string, string | undefined>): Check {
  const { ready, missing, runtime, expected } = checkInstall(root, { home, env: vars, link: false });
  const state = readBootstrapState(root, home);
  // Another copy (the one the hooks run from) may still be bootstrapping while this one answers.
  const others = installStatus(root, home, vars).bootstraps.filter((b) => b.status === 'running' && b.root !== root);
  const elsewhere = others.length ? `; ${others.map((b) => `the hooks' copy in ${b.root} is still bootstrapping (since ${b.started_at})`).join('; ')}` : '';
  if (ready && runtime) {
    const where = runtime.kind === 'in-place' ? 'dependencies, native addon and bundles present' : `runs from ${runtime.dir}`;
    return { name: 'install', status: others.length ? 'degraded' : 'ok', detail: `${root}: ${where}${elsewhere}` };
  }
  if (state?.status === 'running') {
    return { name: 'install', status: 'degraded', detail: `${root}: first-run setup is running (since ${state.started_at}; building ${expected})` };
  }
  return {
    name: 'install',
    status: 'error',
    detail: `${root}: missing ${missing.join(', ')}${state?.status === 'failed' ? `; the last setup failed: ${state.error}` : ''}`,
    // A source checkout finishes with ./install.sh; any other install folder builds its runtime with the bootstrap.
    fix: existsSync(join(root, 'node_modules'))
      ? `cd ${root} && ./install.sh   (log: ${join(home, 'logs', 'bootstrap.log')})`
      : `node ${join(root, 'scripts', 'bootstrap.mjs')} --wait   (log: ${join(home, 'logs', 'bootstrap.log')})`,
  };
}

/** How long doctor waits for the embedder to load and embed one string (a cold transformers model: a few seconds). */
export const EMBED_CHECK_TIMEOUT_MS = 30_000;

/**
 * Rejects after `ms` with a message naming what took too long; the work itself is left to finish or fail. Work that
 * blocks the event loop (a static-table model reads its table synchronously) can finish before the timer gets to
 * fire, so the elapsed time from the start of the work is checked as well: late is late, however the loop was held.
 */
async function within<T>(start: () => Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const tooLong = () => new Error(`${what} took longer than ${Math.round(ms / 1000)} s`);
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(tooLong()), ms);
    timer.unref?.();
  });
  const started = performance.now();
  const result = await Promise.race([start(), timeout]).finally(() => clearTimeout(timer));
  if (performance.now() - started > ms) throw tooLong();
  return result;
}

/**
 * The embedder recall would use (resolved from ENGRAM_EMBEDDER / ENGRAM_MODEL / ENGRAM_MODEL_DIR / config.json),
 * loaded and made to embed one string — a model that resolves but does not load (a damaged download, a missing
 * native backend) is not healthy — and how many engrams have a current vector in its space. Without one, search
 * still works on BM25; this check is where the user learns that and how to fix it.
 */
async function checkEmbeddings(settings: Settings, timeoutMs: number): Promise<Check> {
  const choice = resolveEmbedder(settings);
  if (!choice.spec) {
    const check: Check = { name: 'embeddings', status: 'degraded', detail: `${choice.reason}; search uses BM25 only` };
    if (settings.config.embed.provider !== 'none') check.fix = 'engram model pull';
    return check;
  }
  const spec = choice.spec;
  const model = vectorModelId(spec);
  const started = performance.now();
  let loaded: string;
  try {
    // Model libraries print diagnostics: doctor's stdout is its JSON report.
    const vectors = await within(
      () => quietly(async () => (await loadEmbedder(spec)).embed(['engram doctor: does the embedder embed?'])),
      timeoutMs,
      `loading ${model} and embedding one string`,
    );
    const vector = vectors[0];
    if (!vector || vector.length === 0 || !vector.every(Number.isFinite)) throw new Error('it returned no usable vector');
    loaded = `loads and embeds (${vector.length} dimensions, ${Math.round(performance.now() - started)} ms)`;
  } catch (error) {
    return {
      name: 'embeddings',
      status: 'degraded',
      detail: `${model} (${choice.reason}) does not work: ${(error as Error).message}; search uses BM25 only`,
      fix: spec.kind === 'transformers' ? `engram model pull ${spec.model}` : 'engram doctor --pretty (after reinstalling: ./install.sh)',
    };
  }
  const store = openStore({ path: settings.paths.db, busyTimeoutMs: settings.config.store.busy_timeout_ms });
  try {
    const status = embeddingStatus(store, settings);
    const name = `${status.model} (${choice.reason}) ${loaded}; quality: ${status.quality}`;
    if (status.pending > 0) {
      return {
        name: 'embeddings',
        status: 'degraded',
        detail: status.serving
          ? `${name}; re-embedding ${status.vectors}/${status.total}, searching ${status.serving}'s vectors meanwhile`
          : `${name}; ${status.pending} of ${status.total} engrams have no current vector and are found by BM25 only`,
        fix: status.serving ? 'wait for the background server (engram status shows progress), or run engram reindex' : 'engram reindex',
      };
    }
    const coverage = status.total === 0 ? 'no engrams to embed yet' : `all ${status.total} engrams have vectors`;
    return { name: 'embeddings', status: 'ok', detail: `${name}; ${coverage}` };
  } finally {
    store.close();
  }
}

/** Hook failures logged in the last day: a hook never shows its errors to the agent, so this is where they surface. */
function checkHookErrors(settings: Settings, now: Date): Check {
  const file = join(settings.paths.logs, 'hooks.log');
  if (!existsSync(file)) return { name: 'hook_errors', status: 'ok', detail: 'no hook log yet' };
  const since = now.getTime() - 24 * 3600 * 1000;
  const errors = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line) as { t?: string; level?: string; msg?: string; error?: { message?: string } };
      } catch {
        return undefined;
      }
    })
    .filter((entry) => entry?.level === 'error' && Date.parse(entry.t ?? '') >= since);
  if (errors.length === 0) return { name: 'hook_errors', status: 'ok', detail: `no hook errors in the last 24 h (${file})` };
  const last = errors.at(-1);
  return {
    name: 'hook_errors',
    status: 'degraded',
    detail: `${errors.length} hook error(s) in the last 24 h; last: ${last?.error?.message ?? last?.msg ?? '?'} (${file})`,
  };
}

/** Options for {@link runDoctor}. */
export interface DoctorOptions {
  /** The install folder to check (dist/, node_modules/). */
  installRoot: string;
  now?: () => Date;
  /** The folder doctor runs in: its repository's agent settings are checked too. */
  cwd?: string;
  /** The process environment, to find a Codex CLI that can tell whether Engram's hooks are still trusted. */
  vars?: Record<string, string | undefined>;
  /** How long the embedder may take to load and embed one string. @default {@link EMBED_CHECK_TIMEOUT_MS} */
  embedTimeoutMs?: number;
}

/** Runs every check; each failure is reported, never thrown. */
export async function runDoctor(env: EngramEnv, options: DoctorOptions): Promise<DoctorReport> {
  const checks: Check[] = [checkNode()];
  let settings: Settings | undefined;
  checks.push(
    attempt('config', () => {
      settings = loadSettings(env);
      return {
        name: 'config',
        status: 'ok',
        detail: settings.configSource === 'file' ? `${settings.paths.config} is valid` : 'no config.json; defaults in use',
      };
    }),
  );
  if (settings) {
    const current = settings;
    checks.push(attempt('home', () => checkHome(current)));
    checks.push(attempt('sqlite', checkSqlite));
    checks.push(attempt('sqlite_vec', checkVectors));
    checks.push(attempt('store', () => checkStore(current)));
    checks.push(attempt('install', () => checkInstallFolder(options.installRoot, current.paths.home, options.vars ?? {})));
    checks.push(await checkEmbeddings(current, options.embedTimeoutMs ?? EMBED_CHECK_TIMEOUT_MS).catch((error: unknown): Check => ({ name: 'embeddings', status: 'error', detail: (error as Error).message })));
    checks.push(attempt('claude', () => checkClaude(env, options)));
    checks.push(attempt('codex', () => checkCodex(env, options)));
    checks.push(attempt('claude_mcp', () => checkClaudeMcp(env, options)));
    checks.push(attempt('codex_mcp', () => checkCodexMcp(env, options)));
    checks.push(attempt('mcp_server', () => checkMcpStarts(env, options)));
    checks.push(attempt('hook_errors', () => checkHookErrors(current, (options.now ?? (() => new Date()))())));
  }
  const status = checks.some((c) => c.status === 'error')
    ? 'error'
    : checks.some((c) => c.status === 'degraded')
      ? 'degraded'
      : 'ok';
  return { status, checks };
}
