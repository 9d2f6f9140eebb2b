/**
 * What a new or changed text is compared with: the live engrams (pending and active, not deleted), each analysed once
 * — its conflict analysis (`analyse`, conflicts.ts) and its content words (review's near-duplicates) — and indexed by
 * salient stem and by word. A save then judges its text only against the engrams that share enough salient stems
 * with it to pass rule 1, found by prefix filtering (see `search`), instead of reading and judging every active engram
 * (docs/PERFORMANCE.md, "Saves in big stores").
 *
 * One index per open store (connection), held here and brought up to date before each use from the store's change
 * log (`search_changes`, migration 13: which engram each move of the search generation was about), as the BM25 index
 * follows writes: the engrams changed since its generation are read again, and only those whose text changed are
 * analysed again. A process that has none builds it on first use (the warm server builds it ahead, in a worker
 * thread: text-index-worker.ts); building costs about what one comparison with every engram used to.
 *
 * Inside a write transaction the index sees that transaction's own writes, which a rollback takes back. So what it
 * applies there is journaled under a token it writes to a TEMP table in the same transaction: the next use reads the
 * token back, and whatever was applied under a later token was rolled back with it and is read again.
 *
 * Layout: each live engram has a slot (a changed text gets a new one; the old one dies), its analysis packed into one
 * Int32Array arena as ids of interned strings, kept in the order `analyse` produced them (the order decides which word
 * a verdict's reason names). Postings (term → slots) are a compact base, each term's slots ordered by size then engram
 * id, plus an overlay of slots added since; dead slots are skipped on the walk, and the whole is repacked when the
 * garbage grows.
 * @module
 */
import removeStopWords from 'wink-nlp-utils/src/tokens-remove-words.js';
import type { EngramStatus, Store } from '../../core/index.js';

/** What is used of a prepared statement. */
interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
// One file, not the recall barrel: services/recall imports governance (its gates), and this needs only the tokenizer.
import { words as wordTokens } from '../recall/text.js';
import { analyse, stemOf, type Analysis } from './conflicts.js';

const DEAD = 0;
const ACTIVE = 1;
const PENDING = 2;

/** Record header: counts of salient, nouns, positive, negative, values, words; then the ids in that order. */
const HEADER = 6;

/**
 * The content words of a text as review's near-duplicates compare them: BM25's analysis chain (services/learn
 * `contentWords`: words, stop words removed, Porter stems), with memoised stems. Distinct, in first-seen order.
 */
export function contentTerms(text: string): string[] {
  return [...new Set(removeStopWords(wordTokens(text)).map(stemOf))];
}

// The last text analysed: a save analyses its text as a probe, then the index analyses the same text as a stored row.
let lastAnalysed: { text: string; analysis: Analysis } | null = null;

/** `analyse`, remembering the last text (the analysis is a pure function of the text). */
export function analysed(text: string): Analysis {
  if (lastAnalysed?.text !== text) lastAnalysed = { text, analysis: analyse(text) };
  return lastAnalysed.analysis;
}

/** A 64-bit fingerprint of a text (two 32-bit lanes): whether a row read again still holds the text analysed. */
function fingerprint(text: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 | 0, h2 | 0];
}

/** The columns the index reads of an engram. */
interface Row {
  id: number;
  text: string;
  status: string;
  project: string | null;
  deleted_at: string | null;
}

/** Postings of one kind of term in compressed-row form: the slots of term t are `list[offsets[t] .. offsets[t + 1])`. */
interface Postings {
  offsets: Int32Array;
  list: Int32Array;
}

/** Everything an index is made of, as plain data: what a worker thread builds and hands over (transferable arrays). */
export interface TextIndexData {
  storeUid: string;
  generation: number;
  terms: string[];
  projects: string[];
  slots: number;
  engramOf: Int32Array;
  statusOf: Uint8Array;
  projectOf: Int32Array;
  recordAt: Int32Array;
  printA: Int32Array;
  printB: Int32Array;
  arena: Int32Array;
  stems: Postings;
  words: Postings;
}

/** What was applied inside a transaction, under the token written with it. */
interface JournalEntry {
  token: number;
  /** The generation before it was applied. */
  before: number;
  ids: number[];
  /** The whole index was built inside the transaction: a rollback means building it again. */
  build?: boolean;
}

/** An engram a conflict check should judge: it shares enough salient stems (or has a verdict given ahead). */
export interface ConflictCandidate {
  id: number;
  /** Shared salient stems / the smaller side's salient stems (0 when the pair shares none). */
  overlap: number;
  slot: number;
}

const MARK_TABLE = 'engram_text_index_mark';

/**
 * For a pass test `passes(shared, smaller)` that grows with `shared`: the least number of shared terms that passes
 * when the smaller side has `smaller` terms (Infinity when none does), by the test itself — no rounding of our own
 * can then disagree with it. Remembered per size.
 */
function leastShared(passes: (shared: number, smaller: number) => boolean): (smaller: number) => number {
  const known: number[] = [];
  return (smaller) => {
    let least = known[smaller];
    if (least === undefined) {
      least = Number.POSITIVE_INFINITY;
      for (let shared = 0; shared <= smaller; shared++) {
        if (passes(shared, smaller)) {
          least = shared;
          break;
        }
      }
      known[smaller] = least;
    }
    return least;
  };
}

/** The index of one store. Use {@link textIndexOf}; methods assume it was brought up to date just before. */
export class TextIndex {
  generation: number;
  readonly storeUid: string;
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[];
  private readonly projectIds = new Map<string, number>();
  private readonly projects: string[];
  private readonly slotOf = new Map<number, number>();
  private slots: number;
  private engramOf: Int32Array;
  private statusOf: Uint8Array;
  private projectOf: Int32Array;
  private recordAt: Int32Array;
  private printA: Int32Array;
  private printB: Int32Array;
  private arena: Int32Array;
  private arenaUsed: number;
  private stems: Postings;
  private words: Postings;
  private readonly stemOverlay = new Map<number, number[]>();
  private readonly wordOverlay = new Map<number, number[]>();
  /** Postings in the overlays, and postings of dead slots still in the base: what a repack would drop or move. */
  private overlayCount = 0;
  private deadCount = 0;
  /** Scratch of a search: query terms marked by id, slots stamped once visited. */
  private marks = new Uint8Array(0);
  private stamps = new Uint32Array(0);
  private epoch = 0;
  private readonly journal: JournalEntry[] = [];
  private tokens = 0;
  private confirming = false;
  /** Ids to read again at the next sync (their writes were rolled back). */
  private readonly reread = new Set<number>();
  /** Set when it cannot be brought up to date any more (a build that was rolled back): build again. */
  private broken = false;
  /** Statements of the connection it follows, prepared once (an import syncs once per line). */
  private statements: { rows?: Statement; mark?: Statement; setMark?: Statement } = {};

  private constructor(data: TextIndexData) {
    this.storeUid = data.storeUid;
    this.generation = data.generation;
    this.terms = data.terms;
    this.terms.forEach((term, id) => this.termIds.set(term, id));
    this.projects = data.projects;
    this.projects.forEach((project, id) => this.projectIds.set(project, id));
    this.slots = data.slots;
    this.engramOf = data.engramOf;
    this.statusOf = data.statusOf;
    this.projectOf = data.projectOf;
    this.recordAt = data.recordAt;
    this.printA = data.printA;
    this.printB = data.printB;
    this.arena = data.arena;
    this.arenaUsed = data.arena.length;
    this.stems = data.stems;
    this.words = data.words;
    for (let slot = 0; slot < this.slots; slot++) if (this.statusOf[slot] !== DEAD) this.slotOf.set(this.engramOf[slot] as number, slot);
  }

  /** An empty index at generation -1 (nothing read yet). */
  private static empty(storeUid: string): TextIndex {
    const none = (): Postings => ({ offsets: new Int32Array(1), list: new Int32Array(0) });
    return new TextIndex({
      storeUid,
      generation: -1,
      terms: [],
      projects: [],
      slots: 0,
      engramOf: new Int32Array(1024),
      statusOf: new Uint8Array(1024),
      projectOf: new Int32Array(1024),
      recordAt: new Int32Array(1024),
      printA: new Int32Array(1024),
      printB: new Int32Array(1024),
      arena: new Int32Array(0),
      stems: none(),
      words: none(),
    });
  }

  /** Builds the index of what this connection sees now (inside a transaction: including its own writes). */
  static build(store: Store): TextIndex {
    const tentative = store.db.inTransaction;
    const run = (): TextIndex => {
      const state = store.searchState();
      const index = TextIndex.empty(state.store_uid);
      const rows = store.db
        .prepare("SELECT id, text, status, project, deleted_at FROM engrams WHERE deleted_at IS NULL AND status IN ('active', 'pending') ORDER BY id")
        .all() as Row[];
      index.arena = new Int32Array(Math.max(1024, rows.length * 48));
      for (const row of rows) index.refresh(row.id, row, false);
      index.repack();
      index.generation = state.generation;
      if (tentative) index.journalAdd(store, -1, [], true);
      return index;
    };
    return tentative ? run() : store.read(run);
  }

  /** An index from data a worker built; {@link sync} brings it up to date. */
  static fromData(data: TextIndexData): TextIndex {
    return new TextIndex(data);
  }

  /** The index as plain data (what a worker posts back; its arrays can be transferred). */
  toData(): TextIndexData {
    if (this.overlayCount + this.deadCount > 0) this.repack();
    return {
      storeUid: this.storeUid,
      generation: this.generation,
      terms: this.terms,
      projects: this.projects,
      slots: this.slots,
      engramOf: this.engramOf.slice(0, this.slots),
      statusOf: this.statusOf.slice(0, this.slots),
      projectOf: this.projectOf.slice(0, this.slots),
      recordAt: this.recordAt.slice(0, this.slots),
      printA: this.printA.slice(0, this.slots),
      printB: this.printB.slice(0, this.slots),
      arena: this.arena.slice(0, this.arenaUsed),
      stems: this.stems,
      words: this.words,
    };
  }

  /** Live engrams indexed. */
  get size(): number {
    return this.slotOf.size;
  }

  /**
   * Brings the index to what this connection sees now, from the change log. False when it cannot (the log no longer
   * reaches back to its generation, another store, a rolled-back build): build a new one.
   */
  sync(store: Store): boolean {
    if (this.broken) return false;
    const tentative = store.db.inTransaction;
    if (this.journal.length > 0) this.settle(store, tentative);
    if (this.broken) return false;
    const run = (): boolean => {
      const state = store.searchState();
      if (state.store_uid !== this.storeUid) return false;
      if (state.generation === this.generation && this.reread.size === 0) return true;
      const changes = store.searchChanges(this.generation);
      if (!changes.complete) return false;
      const ids = this.reread.size ? [...new Set([...changes.ids, ...this.reread])] : changes.ids;
      const before = this.generation;
      this.apply(store, ids);
      this.generation = changes.generation;
      this.reread.clear();
      if (tentative && ids.length > 0) this.journalAdd(store, before, ids);
      return true;
    };
    return tentative ? run() : store.read(run);
  }

  /**
   * The active engrams a probe would be shown beside (same project, or personal; never itself) whose share of
   * salient stems reaches `threshold` of the smaller side's (rule 1's measure, `shared / min(|A|, |B|)`), plus those
   * named in `also` (verdicts given ahead, whatever their overlap).
   */
  conflictCandidates(mine: Analysis, probe: { id?: number; project: string | null }, threshold: number, also?: Iterable<number>): ConflictCandidate[] {
    const found: ConflictCandidate[] = [];
    const inScope = this.scope(probe.project, probe.id, true);
    const size = mine.salient.size;
    const least = leastShared((shared, smaller) => shared / smaller >= threshold);
    if (size > 0) {
      this.search(0, mine.salient, inScope, (theirs) => least(Math.min(size, theirs)), (slot, shared, theirs) => {
        const overlap = shared / Math.min(size, theirs);
        if (overlap >= threshold) found.push({ id: this.engramOf[slot] as number, overlap, slot });
      });
    }
    const seen = new Set(found.map((candidate) => candidate.id));
    for (const id of also ?? []) {
      const slot = this.slotOf.get(id);
      if (slot === undefined || seen.has(id) || !inScope(slot)) continue;
      seen.add(id);
      const theirs = this.arena[this.recordAt[slot] as number] as number;
      const shared = size && theirs ? this.shared(slot, 0, mine.salient) : 0;
      found.push({ id, overlap: size && theirs ? shared / Math.min(size, theirs) : 0, slot });
    }
    return found;
  }

  /**
   * The live engrams (pending or active) closest to a text by content words, for an engram of `project` (same
   * project, or personal; never `exclude`): those with at least `minWords` words whose `score(shared, smaller side)` reaches
   * `threshold`, the `limit` best (higher score, then lower id). `score` must grow with `shared`.
   */
  nearestByWords(
    terms: readonly string[],
    options: { project: string | null; exclude?: number; minWords: number; threshold: number; limit: number; score: (shared: number, smaller: number) => number },
  ): Array<{ id: number; score: number; status: EngramStatus }> {
    const size = terms.length;
    const { limit, minWords, score } = options;
    const best: Array<{ id: number; score: number; status: EngramStatus }> = [];
    // The bar rises to the worst of the best `limit` once they are found (a tie still enters, by lower id).
    let bar = options.threshold;
    const leastAt = (at: number) => leastShared((shared, smaller) => score(shared, smaller) >= at);
    let least = leastAt(bar);
    this.search(
      5,
      terms,
      this.scope(options.project, options.exclude, false),
      (theirs) => (theirs < minWords ? 0 : least(Math.min(size, theirs))),
      (slot, shared, theirs) => {
        if (theirs < minWords) return;
        const value = score(shared, Math.min(size, theirs));
        if (value < bar) return;
        best.push({ id: this.engramOf[slot] as number, score: value, status: this.statusOf[slot] === ACTIVE ? 'active' : 'pending' });
        best.sort((x, y) => y.score - x.score || x.id - y.id);
        if (best.length > limit) best.pop();
        if (best.length === limit && (best.at(-1) as { score: number }).score > bar) {
          bar = (best.at(-1) as { score: number }).score;
          least = leastAt(bar);
        }
      },
      // With the best `limit` found, a slot is read only if the words it can still share could beat the worst of them,
      // or tie it with a lower id.
      (theirs, reach) => {
        if (theirs < minWords) return Number.NEGATIVE_INFINITY;
        if (best.length < limit) return Number.POSITIVE_INFINITY;
        const bound = score(Math.min(reach, theirs, size), Math.min(size, theirs));
        const worst = best.at(-1) as { id: number; score: number };
        return bound > worst.score ? Number.POSITIVE_INFINITY : bound === worst.score ? worst.id : Number.NEGATIVE_INFINITY;
      },
    );
    return best;
  }

  /** A candidate's analysis, as `analyse` gave it (sets in the same order). */
  analysisOf(slot: number): Analysis {
    const at = this.recordAt[slot] as number;
    const sets: Array<Set<string>> = [];
    let from = at + HEADER;
    for (let part = 0; part < 5; part++) {
      const size = this.arena[at + part] as number;
      const set = new Set<string>();
      for (let i = from; i < from + size; i++) set.add(this.terms[this.arena[i] as number] as string);
      sets.push(set);
      from += size;
    }
    const [salient, nouns, positive, negative, values] = sets as [Set<string>, Set<string>, Set<string>, Set<string>, Set<string>];
    return { salient, nouns, positive, negative, values };
  }

  /** The content words of a live (pending or active) engram, or undefined when it is not indexed. */
  wordsOf(id: number): string[] | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const at = this.recordAt[slot] as number;
    let from = at + HEADER;
    for (let part = 0; part < 5; part++) from += this.arena[at + part] as number;
    const size = this.arena[at + 5] as number;
    return Array.from(this.arena.subarray(from, from + size), (term) => this.terms[term] as string);
  }

  /** Which slots a search may return: live (active only for conflicts), in scope of `project`, not `exclude`. */
  private scope(project: string | null, exclude: number | undefined, activeOnly: boolean): (slot: number) => boolean {
    const wanted = project === null ? null : (this.projectIds.get(project) ?? -2);
    return (slot) => {
      const status = this.statusOf[slot];
      if (status === DEAD || (activeOnly && status !== ACTIVE) || this.engramOf[slot] === exclude) return false;
      const own = this.projectOf[slot] as number;
      return wanted === null || own === -1 || own === wanted;
    };
  }

  /**
   * Visits, once each, the slots that may share enough of `terms` (distinct) in `part` (0: salient stems, 5: words)
   * with the exact count they share. Prefix filtering: a slot of size b sharing at least `need(b)` terms holds one of
   * any `k − need(b) + 1` of the k indexed query terms, so the terms are taken rarest first and the term of rank r is
   * walked only for slots with `need(b) ≤ k − r` — postings are ordered by size, and `need` must not fall as the size
   * grows (it may rise between calls: a top-k bar). Common terms are then walked only for the few slots small enough
   * to need them, instead of for most of the store. A slot first met at rank r holds none of the rarer terms, so it
   * shares at most k − r: `below(size, k − r)` may name an engram id from which slots of that size are not worth
   * reading (a top-k search whose worst can only be tied); the rest of that run is skipped.
   */
  private search(
    part: 0 | 5,
    terms: Iterable<string>,
    accept: (slot: number) => boolean,
    need: (size: number) => number,
    found: (slot: number, shared: number, size: number) => void,
    below?: (size: number, reach: number) => number,
  ): void {
    const base = part === 0 ? this.stems : this.words;
    const overlay = part === 0 ? this.stemOverlay : this.wordOverlay;
    const ids: number[] = [];
    for (const term of terms) {
      const id = this.termIds.get(term);
      if (id !== undefined) ids.push(id);
    }
    const frequency = (id: number): number => (id + 1 < base.offsets.length ? (base.offsets[id + 1] as number) - (base.offsets[id] as number) : 0) + (overlay.get(id)?.length ?? 0);
    ids.sort((x, y) => frequency(x) - frequency(y));
    const k = ids.length;
    if (this.marks.length < this.terms.length) this.marks = new Uint8Array(this.terms.length + 1024);
    if (this.stamps.length < this.engramOf.length) this.stamps = new Uint32Array(this.engramOf.length);
    if (++this.epoch === 0xffffffff) {
      this.stamps.fill(0);
      this.epoch = 1;
    }
    const { marks, stamps, epoch, arena, recordAt, engramOf } = this;
    for (const id of ids) marks[id] = 1;
    const sizeAt = part === 0 ? 0 : 5;
    const visit = (slot: number): void => {
      stamps[slot] = epoch;
      if (!accept(slot)) return;
      const at = recordAt[slot] as number;
      let from = at + HEADER;
      if (part === 5) for (let i = 0; i < 5; i++) from += arena[at + i] as number;
      const size = arena[at + sizeAt] as number;
      let shared = 0;
      for (let i = from; i < from + size; i++) shared += marks[arena[i] as number] as number;
      found(slot, shared, size);
    };
    try {
      for (let rank = 0; rank < k; rank++) {
        const id = ids[rank] as number;
        const reach = k - rank;
        if (id + 1 < base.offsets.length) {
          const end = base.offsets[id + 1] as number;
          let p = base.offsets[id] as number;
          while (p < end) {
            // One run of slots of the same size (in id order) at a time.
            const size = arena[(recordAt[base.list[p] as number] as number) + sizeAt] as number;
            if (need(size) > reach) break;
            const under = below ? below(size, reach) : Number.POSITIVE_INFINITY;
            for (; p < end; p++) {
              const slot = base.list[p] as number;
              if (arena[(recordAt[slot] as number) + sizeAt] !== size) break;
              if ((engramOf[slot] as number) >= under) {
                p = this.runEnd(base.list, p, end, sizeAt, size);
                break;
              }
              if (stamps[slot] !== epoch) visit(slot);
            }
          }
        }
        for (const slot of overlay.get(id) ?? []) {
          if (stamps[slot] === epoch) continue;
          const size = arena[(recordAt[slot] as number) + sizeAt] as number;
          if (need(size) > reach || (below && (engramOf[slot] as number) >= below(size, reach))) continue;
          visit(slot);
        }
      }
    } finally {
      for (const id of ids) marks[id] = 0;
    }
  }

  /** The end of the run of slots of one size that starts before `from` in a size-ordered posting list. */
  private runEnd(list: Int32Array, from: number, end: number, sizeAt: number, size: number): number {
    let low = from;
    let high = end;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((this.arena[(this.recordAt[list[middle] as number] as number) + sizeAt] as number) > size) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** How many of `terms` a slot's part holds. */
  private shared(slot: number, part: 0 | 5, terms: Iterable<string>): number {
    const at = this.recordAt[slot] as number;
    let from = at + HEADER;
    if (part === 5) for (let i = 0; i < 5; i++) from += this.arena[at + i] as number;
    const held = new Set(this.arena.subarray(from, from + (this.arena[at + part] as number)));
    let shared = 0;
    for (const term of terms) {
      const id = this.termIds.get(term);
      if (id !== undefined && held.has(id)) shared++;
    }
    return shared;
  }

  /** Reads the rows of changed engrams and brings their slots up to date. */
  private apply(store: Store, ids: readonly number[]): void {
    const read = (this.statements.rows ??= store.db.prepare('SELECT id, text, status, project, deleted_at FROM engrams WHERE id IN (SELECT value FROM json_each(?))'));
    for (let at = 0; at < ids.length; at += 5_000) {
      const chunk = ids.slice(at, at + 5_000);
      const rows = new Map((read.all(JSON.stringify(chunk)) as Row[]).map((row) => [row.id, row]));
      for (const id of chunk) this.refresh(id, rows.get(id), true);
    }
    if (this.overlayCount + this.deadCount > Math.max(20_000, (this.stems.list.length + this.words.list.length) / 4)) this.repack();
  }

  /** One engram as it is now (undefined: gone for good). A new text gets a new slot; a status or project moves in place. */
  private refresh(id: number, row: Row | undefined, overlay: boolean): void {
    const slot = this.slotOf.get(id);
    const status = row && row.deleted_at === null ? (row.status === 'active' ? ACTIVE : row.status === 'pending' ? PENDING : DEAD) : DEAD;
    if (!row || status === DEAD) {
      if (slot !== undefined) this.kill(slot);
      return;
    }
    const project = row.project === null ? -1 : this.intern(this.projectIds, this.projects, row.project);
    const [a, b] = fingerprint(row.text);
    if (slot !== undefined && this.printA[slot] === a && this.printB[slot] === b) {
      this.statusOf[slot] = status;
      this.projectOf[slot] = project;
      return;
    }
    if (slot !== undefined) this.kill(slot);
    this.add(id, status, project, a, b, analysed(row.text), contentTerms(row.text), overlay);
  }

  private add(id: number, status: number, project: number, a: number, b: number, analysis: Analysis, words: readonly string[], overlay: boolean): void {
    if (this.slots === this.engramOf.length) this.grow();
    const slot = this.slots++;
    const parts = [analysis.salient, analysis.nouns, analysis.positive, analysis.negative, analysis.values];
    const length = HEADER + parts.reduce((sum, part) => sum + part.size, 0) + words.length;
    if (this.arenaUsed + length > this.arena.length) {
      const bigger = new Int32Array(Math.max(1024, (this.arenaUsed + length) * 2));
      bigger.set(this.arena.subarray(0, this.arenaUsed));
      this.arena = bigger;
    }
    const at = this.arenaUsed;
    let write = at + HEADER;
    parts.forEach((part, i) => {
      this.arena[at + i] = part.size;
      for (const term of part) this.arena[write++] = this.intern(this.termIds, this.terms, term);
    });
    this.arena[at + 5] = words.length;
    for (const word of words) this.arena[write++] = this.intern(this.termIds, this.terms, word);
    this.arenaUsed = write;
    this.engramOf[slot] = id;
    this.statusOf[slot] = status;
    this.projectOf[slot] = project;
    this.recordAt[slot] = at;
    this.printA[slot] = a;
    this.printB[slot] = b;
    this.slotOf.set(id, slot);
    if (!overlay) return;
    const post = (map: Map<number, number[]>, term: number): void => {
      const list = map.get(term);
      if (list) list.push(slot);
      else map.set(term, [slot]);
      this.overlayCount++;
    };
    const salient = this.arena[at] as number;
    for (let i = at + HEADER; i < at + HEADER + salient; i++) post(this.stemOverlay, this.arena[i] as number);
    for (let i = write - words.length; i < write; i++) post(this.wordOverlay, this.arena[i] as number);
  }

  private kill(slot: number): void {
    this.statusOf[slot] = DEAD;
    this.slotOf.delete(this.engramOf[slot] as number);
    const at = this.recordAt[slot] as number;
    this.deadCount += (this.arena[at] as number) + (this.arena[at + 5] as number);
  }

  private grow(): void {
    const size = this.engramOf.length * 2;
    const grown = <T extends Int32Array | Uint8Array>(array: T, make: (n: number) => T): T => {
      const bigger = make(size);
      bigger.set(array);
      return bigger;
    };
    this.engramOf = grown(this.engramOf, (n) => new Int32Array(n));
    this.statusOf = grown(this.statusOf, (n) => new Uint8Array(n));
    this.projectOf = grown(this.projectOf, (n) => new Int32Array(n));
    this.recordAt = grown(this.recordAt, (n) => new Int32Array(n));
    this.printA = grown(this.printA, (n) => new Int32Array(n));
    this.printB = grown(this.printB, (n) => new Int32Array(n));
  }

  private intern(ids: Map<string, number>, table: string[], value: string): number {
    let id = ids.get(value);
    if (id === undefined) {
      id = table.length;
      table.push(value);
      ids.set(value, id);
    }
    return id;
  }

  /** Drops dead slots and moves every posting into the compact base (slots renumbered in order, records copied). */
  private repack(): void {
    let live = 0;
    let arenaSize = 0;
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.statusOf[slot] === DEAD) continue;
      live++;
      const at = this.recordAt[slot] as number;
      let length = HEADER;
      for (let part = 0; part < HEADER; part++) length += this.arena[at + part] as number;
      arenaSize += length;
    }
    const capacity = Math.max(1024, live + (live >> 2));
    const engramOf = new Int32Array(capacity);
    const statusOf = new Uint8Array(capacity);
    const projectOf = new Int32Array(capacity);
    const recordAt = new Int32Array(capacity);
    const printA = new Int32Array(capacity);
    const printB = new Int32Array(capacity);
    const arena = new Int32Array(Math.max(1024, arenaSize + (arenaSize >> 2)));
    let next = 0;
    let used = 0;
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.statusOf[slot] === DEAD) continue;
      const at = this.recordAt[slot] as number;
      let length = HEADER;
      for (let part = 0; part < HEADER; part++) length += this.arena[at + part] as number;
      arena.set(this.arena.subarray(at, at + length), used);
      engramOf[next] = this.engramOf[slot] as number;
      statusOf[next] = this.statusOf[slot] as number;
      projectOf[next] = this.projectOf[slot] as number;
      recordAt[next] = used;
      printA[next] = this.printA[slot] as number;
      printB[next] = this.printB[slot] as number;
      used += length;
      next++;
    }
    Object.assign(this, { engramOf, statusOf, projectOf, recordAt, printA, printB, arena, arenaUsed: used, slots: next });
    this.slotOf.clear();
    for (let slot = 0; slot < next; slot++) this.slotOf.set(engramOf[slot] as number, slot);
    // Postings: counted per term, then placed (slots in ascending order within each term).
    this.stems = this.pack(0, next);
    this.words = this.pack(5, next);
    this.stemOverlay.clear();
    this.wordOverlay.clear();
    this.overlayCount = 0;
    this.deadCount = 0;
  }

  /** The base postings of one part (0: salient stems, 5: words) of the first `slots` slots. */
  private pack(part: 0 | 5, slots: number): Postings {
    const { arena, recordAt } = this;
    const offsets = new Int32Array(this.terms.length + 1);
    const bounds = (slot: number): [number, number] => {
      const at = recordAt[slot] as number;
      let from = at + HEADER;
      if (part === 5) for (let i = 0; i < 5; i++) from += arena[at + i] as number;
      return [from, from + (arena[at + part] as number)];
    };
    for (let slot = 0; slot < slots; slot++) {
      const [from, to] = bounds(slot);
      for (let i = from; i < to; i++) {
        const term = (arena[i] as number) + 1;
        offsets[term] = (offsets[term] as number) + 1;
      }
    }
    for (let t = 0; t < this.terms.length; t++) offsets[t + 1] = (offsets[t + 1] as number) + (offsets[t] as number);
    const list = new Int32Array(offsets[this.terms.length] as number);
    const fill = offsets.slice(0, this.terms.length);
    // Each term's slots in order of size (where a search's prefix filter stops), then of engram id (where a top-k
    // search stops once only a lower id could still tie).
    const engramOf = this.engramOf;
    const order = Int32Array.from({ length: slots }, (_, slot) => slot).sort(
      (x, y) => (arena[(recordAt[x] as number) + part] as number) - (arena[(recordAt[y] as number) + part] as number) || (engramOf[x] as number) - (engramOf[y] as number),
    );
    for (const slot of order) {
      const [from, to] = bounds(slot);
      for (let i = from; i < to; i++) list[(fill[arena[i] as number] as number)++] = slot;
    }
    return { offsets, list };
  }

  /** Settles what was applied inside transactions: keeps what this connection still sees, reads again what it does not. */
  private settle(store: Store, tentative: boolean): void {
    const mark = this.readMark(store);
    const first = this.journal.findIndex((entry) => entry.token > mark);
    if (first >= 0) {
      const rolled = this.journal.splice(first);
      if (rolled.some((entry) => entry.build)) {
        this.broken = true;
        return;
      }
      this.generation = (rolled[0] as JournalEntry).before;
      for (const entry of rolled) for (const id of entry.ids) this.reread.add(id);
    }
    // Outside a transaction everything it still sees is committed: nothing left to roll back.
    if (!tentative) this.journal.length = 0;
  }

  private journalAdd(store: Store, before: number, ids: number[], build = false): void {
    const token = ++this.tokens;
    this.writeMark(store, token);
    this.journal.push({ token, before, ids, ...(build ? { build } : {}) });
    if (this.confirming) return;
    this.confirming = true;
    // Transactions are synchronous: once the code that opened this one has returned, it committed or rolled back.
    queueMicrotask(() => {
      this.confirming = false;
      if (!store.db.open || store.db.inTransaction || this.journal.length === 0) return;
      try {
        this.settle(store, false);
      } catch {
        this.broken = true;
      }
    });
  }

  private readMark(store: Store): number {
    try {
      this.statements.mark ??= store.db.prepare(`SELECT token FROM temp.${MARK_TABLE} WHERE id = 1`).pluck();
      return (this.statements.mark.get() as number | undefined) ?? 0;
    } catch {
      // No table: it was created in a transaction that rolled back (or never): nothing journaled is visible.
      delete this.statements.mark;
      return 0;
    }
  }

  private writeMark(store: Store, token: number): void {
    try {
      (this.statements.setMark ??= store.db.prepare(`INSERT OR REPLACE INTO temp.${MARK_TABLE} (id, token) VALUES (1, ?)`)).run(token);
    } catch {
      // First use, or the table went with a rolled-back transaction that created it.
      store.db.exec(`CREATE TEMP TABLE IF NOT EXISTS ${MARK_TABLE} (id INTEGER PRIMARY KEY, token INTEGER NOT NULL)`);
      this.statements.setMark = store.db.prepare(`INSERT OR REPLACE INTO temp.${MARK_TABLE} (id, token) VALUES (1, ?)`);
      this.statements.setMark.run(token);
    }
  }
}

const indexes = new WeakMap<Store, TextIndex>();

/**
 * The store's text index, brought up to date with what this connection sees now — built here when this process has
 * none yet, or when the change log no longer reaches back to it.
 */
export function textIndexOf(store: Store): TextIndex {
  const held = indexes.get(store);
  if (held?.sync(store)) return held;
  const built = TextIndex.build(store);
  indexes.set(store, built);
  return built;
}

/** Brings the store's index up to date if this process holds one (a warm server between requests); false when none is held (any more). */
export function syncTextIndex(store: Store): boolean {
  const held = indexes.get(store);
  if (!held) return false;
  if (held.sync(store)) return true;
  indexes.delete(store);
  return false;
}

/** Whether this process holds an index of the store. */
export function hasTextIndex(store: Store): boolean {
  return indexes.has(store);
}

/** Builds the index of a store somewhere else (a worker thread): its data at some generation. */
export type TextIndexBuilder = (job: { dbPath: string }) => Promise<TextIndexData>;

/** Builds under way, by store: what a caller that can wait (an operation, the viewer) waits for. */
const warming = new WeakMap<Store, Promise<unknown>>();

/**
 * Makes sure this process holds the store's index: built by `builder` (a worker thread, off the event loop) when given,
 * else here — after `after` settles (the warm server builds its BM25 index first: two builds at once doubled its
 * peak memory). One built here in the meantime (a save that could not wait) wins over the worker's.
 */
export function warmTextIndex(store: Store, builder?: TextIndexBuilder, options: { after?: Promise<unknown> } = {}): Promise<'held' | 'built'> {
  const running = warming.get(store);
  if (running) return running.then(() => 'held' as const);
  const build = (async (): Promise<'held' | 'built'> => {
    await options.after?.catch(() => undefined);
    if (indexes.has(store)) {
      syncTextIndex(store);
      if (indexes.has(store)) return 'held';
    }
    if (builder) {
      const data = await builder({ dbPath: store.path });
      if (indexes.has(store) || !store.db.open) return 'held';
      const index = TextIndex.fromData(data);
      if (index.sync(store)) {
        indexes.set(store, index);
        return 'built';
      }
    }
    textIndexOf(store);
    return 'built';
  })();
  warming.set(store, build);
  void build.then(
    () => warming.delete(store),
    () => warming.delete(store),
  );
  return build;
}

/**
 * Resolves once a build of the store's index that is under way (a warm server starting) has finished, failed or not —
 * or after `timeoutMs`, whichever comes first; at once when none is. A caller that may wait (an operation that
 * writes, the viewer's review, a job) waits here rather than building the index again on the event loop.
 */
export async function textIndexReady(store: Store, timeoutMs = 60_000): Promise<void> {
  const running = warming.get(store);
  if (!running) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([running.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs).unref()))]);
  clearTimeout(timer);
}
