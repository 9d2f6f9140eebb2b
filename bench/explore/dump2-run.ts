// EXPLORATION ONLY: per-engram BM25 term scores and IDFs for each set (embedder-independent).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/core/index.js';
import { prepareDraft, storeDraft } from '../../src/services/memory/index.js';
import { buildBm25Index, EVAL_SET_NAMES, evalSetFiles, type EvalSetName } from '../../src/services/index.js';
import { searchTerms } from '../../src/services/recall/text.js';
const args = process.argv.slice(2);
const root = args[args.indexOf('--root') + 1] as string;
for (const set of EVAL_SET_NAMES as EvalSetName[]) {
  const store = openStore({ path: join(mkdtempSync(join(tmpdir(), 'dump2-')), 'b.db') });
  const at = new Date().toISOString();
  const texts = new Map<number, string>();
  store.write(() => {
    for (const line of readFileSync(evalSetFiles(root, set, 'dev').memories, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      const draft = prepareDraft({ text: m.text, category: m.category, tags: m.tags, project: m.group, scope: m.group ? 'project' : 'personal', source: 'import' });
      const { engram } = storeDraft(store, draft, at, 'skip');
      texts.set(engram.id, `${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`);
    }
  });
  const { index } = buildBm25Index(store);
  const docs: Record<number, Record<string, number>> = {};
  const idf: Record<string, number> = {};
  for (const [id, text] of texts) {
    const terms = [...new Set(searchTerms(text))];
    const scores = index.termScores(id, terms);
    docs[id] = Object.fromEntries(terms.map((t, i) => [t, scores[i] as number]));
    for (const t of terms) idf[t] = index.idf(t);
  }
  writeFileSync(`/tmp/s2/dump/${set}-bm25.json`, JSON.stringify({ docs, idf, unseen: index.idf('zzzzqqqq') }));
  store.close();
  console.error(set, texts.size);
}
