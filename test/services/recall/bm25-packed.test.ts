import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import bm25 from 'wink-bm25-text-search';
import { describe, expect, it } from 'vitest';
import type { Engram, EngramStatus, Store } from '../../../src/core/index.js';
import { buildBm25Index, EVAL_SET_NAMES, evalSetFiles, prepareDraft, storeDraft, TUNING, type Bm25Filter } from '../../../src/services/index.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/services/recall/bm25-packed.js';
import { hasAllTags, inCategory } from '../../../src/services/recall/gates.js';
import { searchTerms } from '../../../src/services/recall/text.js';
import { ROOT, tempStore } from '../../_helpers.js';

/**
 * The reference: wink-bm25-text-search used as the index was before it was packed — every document added with its
 * field values retained, filters run by wink on those values inside its search loop, results from wink's own search.
 */
function winkReference(store: Store) {
  const engine = bm25();
  engine.defineConfig({
    fldWeights: { ...TUNING.bm25Fields },
    bm25Params: { ...TUNING.bm25Params },
    ovFldNames: ['f_project', 'f_category', 'f_tags', 'f_status', 'f_learned_by'],
  });
  engine.definePrepTasks([searchTerms]);
  let docs = 0;
  for (const engram of store.engrams.iterate()) {
    engine.addDoc(
      {
        title: engram.title ?? '',
        text: engram.text,
        category: engram.category.replace(/[/_.-]/g, ' '),
        tags: engram.tags.join(' '),
        f_project: engram.project ?? '',
        f_category: engram.category,
        f_tags: engram.tags,
        f_status: engram.status,
        f_learned_by: engram.learned_by,
      },
      String(engram.id),
    );
    docs++;
  }
  for (let pad = docs; pad < 3; pad++) {
    engine.addDoc({ title: '', text: '', category: '', tags: '', f_project: '', f_category: '', f_tags: [], f_status: '', f_learned_by: '' }, `pad:${pad}`);
  }
  engine.consolidate();
  const matches = (values: Record<string, unknown>, filter: Bm25Filter): boolean => {
    if (filter.statuses && !filter.statuses.has(values.f_status as EngramStatus)) {
      if (values.f_status !== 'pending' || !filter.pendingLearnedBy?.has(values.f_learned_by as string)) return false;
    }
    if (filter.projects && !filter.projects.has(values.f_project as string)) return false;
    if (filter.category !== undefined && !inCategory(values.f_category as string, filter.category)) return false;
    return hasAllTags(values.f_tags as string[], filter.tags);
  };
  return {
    engine,
    search: (query: string, limit: number, filter?: Bm25Filter) => {
      const active = filter && (filter.projects || filter.statuses || filter.category !== undefined || filter.tags?.length);
      return engine
        .search(query, limit, active ? (values) => matches(values, filter) : undefined)
        .map(([id, score]) => ({ id: Number(id), score }));
    },
  };
}

/** Loads an evaluation set as the retrieval bench does, then varies review states so status filters have work. */
function loadSet(set: (typeof EVAL_SET_NAMES)[number]): { store: Store; queries: string[]; categories: string[]; tags: string[]; groups: string[] } {
  const store = tempStore();
  const files = evalSetFiles(ROOT, set, 'dev');
  const memories = readFileSync(files.memories, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { text: string; group?: string; category?: string; tags?: string[] });
  const at = new Date().toISOString();
  store.write(() => {
    for (const memory of memories) {
      const draft = prepareDraft({
        text: memory.text,
        ...(memory.category ? { category: memory.category } : {}),
        ...(memory.tags ? { tags: memory.tags } : {}),
        ...(memory.group ? { project: memory.group, scope: 'project' as const } : {}),
        source: 'import',
      });
      storeDraft(store, draft, at, 'skip');
    }
  });
  const engrams = store.engrams.list({ statuses: ['pending', 'active', 'rejected', 'deprecated'] }).engrams;
  // Every 7th pending (learned by the agent or by harvest), every 11th deprecated: the filters then have to choose.
  store.write(() => {
    engrams.forEach((engram: Engram, i) => {
      if (i % 7 === 3) store.engrams.update(engram.id, { status: 'pending', learned_by: i % 2 ? 'agent' : 'harvest' });
      else if (i % 11 === 5) store.engrams.update(engram.id, { status: 'deprecated' });
    });
  });
  const queries = (['dev', 'test'] as const).flatMap((split) =>
    readFileSync(evalSetFiles(ROOT, set, split).queries, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { q: string }).q),
  );
  return {
    store,
    queries,
    categories: [...new Set(engrams.flatMap((e) => [e.category, e.category.split('/')[0] as string]))],
    tags: [...new Set(engrams.flatMap((e) => e.tags))],
    groups: [...new Set(engrams.map((e) => e.project).filter((p): p is string => p !== null))],
  };
}

describe('packed BM25 index', () => {
  for (const set of EVAL_SET_NAMES) {
    it(`returns exactly what wink's search returns on ${set}: ids, scores, order and ties, with and without filters`, () => {
      const { store, queries, categories, tags, groups } = loadSet(set);
      const reference = winkReference(store);
      const { index, base } = buildBm25Index(store);
      const loaded = buildBm25Index(store).index;
      // The snapshot round trip gives the same index.
      const decoded = new (index.constructor as new (b: typeof base) => typeof index)(decodeSnapshot(encodeSnapshot(base)));
      const filters: Array<Bm25Filter | undefined> = [
        undefined,
        { statuses: new Set<EngramStatus>(['active']) },
        { statuses: new Set<EngramStatus>(['active']), pendingLearnedBy: new Set(['agent']) },
        { statuses: new Set<EngramStatus>(['deprecated', 'pending']) },
        { category: categories[0] as string },
        { category: categories[1] as string, statuses: new Set<EngramStatus>(['active']) },
        ...(tags.length ? [{ tags: [tags[0] as string] }, { tags: [tags[1] as string, tags[2] as string] }] : []),
        { tags: ['no-such-tag'] },
        ...(groups.length
          ? [{ projects: new Set([groups[0] as string]), statuses: new Set<EngramStatus>(['active']) }, { projects: new Set([groups[1] as string, '']) }]
          : [{ projects: new Set(['']) }]),
      ];
      let compared = 0;
      let nonEmpty = 0;
      let ties = 0;
      for (const query of queries) {
        for (const [n, filter] of filters.entries()) {
          // The search bench asks for 200; small limits exercise the bounded selection and its tie-breaking.
          for (const limit of n === 0 ? [200, 10, 1, 0] : [200]) {
            const expected = reference.search(query, limit, filter);
            expect(index.search(query, limit, filter), `${query} ${JSON.stringify(filter)} ${limit}`).toEqual(expected);
            expect(decoded.search(query, limit, filter)).toEqual(expected);
            expect(loaded.search(query, limit, filter)).toEqual(expected);
            compared++;
            if (expected.length > 0) nonEmpty++;
            for (let i = 1; i < expected.length; i++) if (expected[i]?.score === expected[i - 1]?.score) ties++;
          }
        }
      }
      expect(nonEmpty).toBeGreaterThan(compared / 3);
      expect(ties).toBeGreaterThan(0); // tie order was exercised
      // IDF for every term, and for a term nobody holds.
      const idf = reference.engine.getIDF();
      for (const [term, t] of Object.entries(reference.engine.getTokens())) expect(index.idf(term)).toBe(idf[t]);
      expect(index.idf('zzzunheardof')).toBe(Math.log((reference.engine.getTotalDocs() + 0.5) / 0.5 + 1));
      // The terms an engram holds, read from the index, are what analysing its fields again gives.
      for (const engram of store.engrams.list({ statuses: ['pending', 'active', 'deprecated'], limit: 40 }).engrams) {
        const analysed = new Set(searchTerms(`${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`));
        const probe = [...analysed].slice(0, 6).concat(['zzzunheardof', 'deploy', 'test']);
        expect(index.termsOf(engram.id, probe)).toEqual(new Set(probe.filter((term) => analysed.has(term))));
      }
    });
  }
});
