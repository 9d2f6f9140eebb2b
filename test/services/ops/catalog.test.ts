/**
 * Every operation of the catalog that writes (what the MCP server — and later the HTTP API — may ask the warm server
 * for), run as the socket runs it: as the agent through MCP, on a real store. No engram row may change without one
 * audit row of that operation, by that actor, naming the rows it changed — and `engram undo` (services/gate) of that
 * row puts the engrams back exactly. The learning statistics feedback moves (`times_matched`, `last_matched_at`) are
 * the one documented exception (docs/GOVERNANCE.md): they are compared without.
 *
 * A write operation added to the catalog without a case here fails the first test: someone has to say how it is
 * audited.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, openStore, readEnv, type Store } from '../../../src/core/index.js';
import { undoOperation } from '../../../src/services/gate/index.js';
import { LEARNING_COLUMNS } from '../../../src/services/governance/index.js';
import {
  addEngram,
  CLI_USER,
  createSearchEngine,
  MCP_AGENT,
  OPERATIONS,
  runOperation,
  searchTuning,
  workEnvironment,
  type OpContext,
} from '../../../src/services/index.js';
import { tempDir } from '../../_helpers.js';

type Row = Record<string, unknown>;

/** One sample call of each write operation, on the store {@link seeded} builds. */
const SAMPLES: Record<string, unknown> = {
  'engram.add': { text: 'The staging cluster is rebuilt every Sunday night.', project: 'shop' },
  'engram.update': { id: 1, text: 'Release builds need NODE_ENV=production.' },
  'engram.deprecate': { id: 1, reason: 'outdated' },
  'engram.feedback': { id: 1, applicable: true, reason: 'it applied' },
  'engram.pin': { id: 1 },
  'engram.unpin': { id: 4 },
  'obs.save': { title: 'Auth model', content: 'JWT now.', type: 'architecture', topic_key: 'architecture/auth-model' },
  'obs.update': { id: 2, title: 'Auth sessions', type: 'decision' },
  'obs.delete': { id: 2 },
  'obs.passive': { content: '## Key Learnings:\n1. Redis keys expire after one hour here\n', session_id: 's1' },
  'projects.merge': { from: 'Shop-App', to: 'shop' },
  // Stored as the Go engram spells a name it has not seen: lower-case.
  'projects.migrate': { old_project: 'shop-app', new_project: 'legacy' },
  'session.start': { id: 's2', project: 'shop' },
  'session.end': { id: 's1', summary: 'done' },
  'session.summary': { content: '## Goal\nJWT sessions', session_id: 's1' },
  'prompt.save': { content: 'move auth to JWT', session_id: 's1' },
};

/** Operations that change no engram row (sessions, prompts; feedback moves learning statistics only). */
const NO_ENGRAM_CHANGE = new Set(['engram.feedback', 'session.start', 'session.end', 'prompt.save']);

/** A store with a person's active engram (#1), the agent's observations (#2 in shop, #3 in Shop-App), a pinned one (#4). */
function seeded(): { store: Store; context: OpContext } {
  const home = tempDir();
  const project = join(tempDir('engram-ops-'), 'shop');
  mkdirSync(project);
  execFileSync('git', ['init', '-q'], { cwd: project });
  const settings = loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home }, { cwd: project }));
  const store = openStore({ path: settings.paths.db });
  const engine = createSearchEngine(store, { embedder: null, tuning: searchTuning(settings.config) });
  const context: OpContext = {
    store,
    settings,
    caller: { cwd: project, agent: 'claude', session_id: 'mcp-test', project: 'shop' },
    actor: MCP_AGENT,
    search: (request) => engine.search(request),
    searchMode: 'bm25',
    model: null,
    environment: (cwd, agent) => workEnvironment(settings, cwd, agent),
    now: () => new Date(),
  };
  addEngram(store, { text: 'Release builds need NODE_ENV=production or the bundle keeps its debug asserts.', project: 'shop' }, { actor: CLI_USER });
  return { store, context };
}

async function seed(context: OpContext): Promise<void> {
  await runOperation('obs.save', { title: 'Auth model', content: 'Sessions live in Redis.', type: 'architecture', topic_key: 'architecture/auth-model', session_id: 's1' }, context);
  await runOperation('obs.save', { title: 'Drift', content: 'Saved under another spelling.', project: 'Shop-App' }, context);
  addEngram(context.store, { text: 'Every commit runs the linters first.', project: 'shop', pinned: true }, { actor: CLI_USER });
}

/** The engrams as SQLite holds them, without the learning statistics feedback moves unaudited. */
function engrams(store: Store): Map<number, Row> {
  const rows = store.db.prepare('SELECT * FROM engrams ORDER BY id').all() as Row[];
  return new Map(rows.map((row) => [row.id as number, Object.fromEntries(Object.entries(row).filter(([column]) => !LEARNING_COLUMNS.has(column)))]));
}

function changedIds(before: Map<number, Row>, after: Map<number, Row>): number[] {
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => JSON.stringify(before.get(id)) !== JSON.stringify(after.get(id))).sort((a, b) => a - b);
}

const lastSeq = (store: Store): number => Number(store.db.prepare('SELECT coalesce(max(seq), 0) FROM audit_log').pluck().get());

describe('the operations catalog', () => {
  it('has a sample for every operation that writes', () => {
    const writes = Object.entries(OPERATIONS).filter(([, op]) => (op as { writes: boolean }).writes).map(([name]) => name).sort();
    // go.import is a person's (below): an agent is refused.
    expect(Object.keys(SAMPLES).sort()).toEqual(writes.filter((name) => name !== 'go.import'));
  });

  it("go.import: refused for the agent; a person's import is one audit row that undo takes back", async () => {
    const { store, context } = seeded();
    try {
      await seed(context);
      const data = { sessions: [], observations: [{ id: 900, sync_id: `obs-${'e'.repeat(32)}`, session_id: 's-go', type: 'decision', title: 'From Go', content: 'Moved in from the Go engram.', project: 'shop', scope: 'project', created_at: '2026-11-01 10:00:00', updated_at: '2026-11-01 10:00:00' }], prompts: [] };
      await expect(runOperation('go.import', { data }, context)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('only a person imports') });
      const before = engrams(store);
      const seq = lastSeq(store);
      await runOperation('go.import', { data }, { ...context, actor: { by: 'user', via: 'http' } });
      const entries = store.db.prepare('SELECT token, actor, via, op FROM audit_log WHERE seq > ? ORDER BY seq').all(seq) as Row[];
      expect(entries.map((entry) => [entry.actor, entry.via, entry.op])).toEqual([['import', 'http', 'go-import']]);
      expect(store.engrams.get(900)).toMatchObject({ learned_by: 'import', status: 'active' });
      undoOperation(store, entries[0]?.token as string);
      expect(engrams(store)).toEqual(before);
    } finally {
      store.close();
    }
  });

  for (const [name, params] of Object.entries(SAMPLES)) {
    it(`${name}: every engram row it changes is in one audit row of the agent's, and undo restores them`, async () => {
      const { store, context } = seeded();
      try {
        await seed(context);
        const before = engrams(store);
        const seq = lastSeq(store);
        await runOperation(name, params, context);
        const after = engrams(store);
        const changed = changedIds(before, after);
        const entries = store.db.prepare('SELECT token, actor, via, op, engram_ids FROM audit_log WHERE seq > ? ORDER BY seq').all(seq) as Array<Row & { engram_ids: string }>;
        // The sample really changes what it should (a case that changed nothing would prove nothing).
        expect(changed.length > 0, `${name} changed engrams ${JSON.stringify(changed)}`).toBe(!NO_ENGRAM_CHANGE.has(name));
        if (changed.length === 0) {
          // Sessions, prompts, feedback statistics: nothing of an engram changed, so nothing to audit.
          expect(entries.filter((entry) => entry.actor === 'agent')).toEqual([]);
          return;
        }
        expect(entries, name).toHaveLength(1);
        const [entry] = entries as [Row & { engram_ids: string }];
        expect({ actor: entry.actor, via: entry.via }).toEqual({ actor: 'agent', via: 'mcp' });
        expect(JSON.parse(entry.engram_ids)).toEqual(expect.arrayContaining(changed));
        undoOperation(store, entry.token as string);
        expect(engrams(store)).toEqual(before);
      } finally {
        store.close();
      }
    });
  }

  it('saves of the agent are learned by the agent and wait for review; a person is not named by any request', async () => {
    const { store, context } = seeded();
    try {
      const saved = (await runOperation('obs.save', SAMPLES['obs.save'], context)) as { id: number; review: { status: string } };
      expect(saved.review.status).toBe('pending');
      expect(store.engrams.get(saved.id)).toMatchObject({ learned_by: 'agent', status: 'pending' });
      const added = (await runOperation('engram.add', SAMPLES['engram.add'], context)) as { engram: { status: string } };
      expect(added.engram.status).toBe('pending');
    } finally {
      store.close();
    }
  });
});
