// EXPLORATION ONLY: query vectors for variants of each dev query.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { embeddingText, loadEmbedder } from '../../src/core/index.js';
import { evalSetFiles, EVAL_SET_NAMES, type EvalSetName } from '../../src/services/index.js';
import removeStopWords from 'wink-nlp-utils/src/tokens-remove-words.js';
import { words } from '../../src/services/recall/text.js';
const args = process.argv.slice(2);
const root = args[args.indexOf('--root') + 1] as string;
const modelDir = resolve(join(root, '..', 'shared', 'models'));
const QW = new Set(['what', 'which', 'who', 'when', 'where', 'why', 'how', 'did', 'does', 'do', 'was', 'were', 'is', 'are', 'the', 'a', 'an', 'we', 'i', 'it', 'agent', 'any', 'there']);
for (const emb of ['use-lite', 'ctx-use-256', 'static-use-256']) {
  const spec = emb === 'use-lite' ? { kind: 'use-lite' as const, model: 'use-lite' as const } : { kind: 'transformers' as const, model: emb, modelDir, folder: join(modelDir, emb), quantized: true };
  const model = await loadEmbedder(spec);
  for (const set of EVAL_SET_NAMES as EvalSetName[]) {
    const qs = readFileSync(evalSetFiles(root, set, 'dev').queries, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).q as string);
    const variants: Record<string, (q: string) => string> = {
      full: (q) => q,
      content: (q) => removeStopWords(words(q)).join(' '),
      noqw: (q) => words(q).filter((w) => !QW.has(w)).join(' '),
    };
    const out: Record<string, Record<string, number[]>> = {};
    for (const [name, f] of Object.entries(variants)) {
      out[name] = {};
      for (let i = 0; i < qs.length; i += 32) {
        const batch = qs.slice(i, i + 32);
        const vs = await model.embed(batch.map((q) => embeddingText(f(q) || q)));
        batch.forEach((q, j) => { out[name]![q] = Array.from(vs[j]!, (x) => Math.round(x * 1e5) / 1e5); });
      }
    }
    writeFileSync(`/tmp/s2/dump/qvec-${emb}-${set}.json`, JSON.stringify(out));
    console.error(emb, set);
  }
}
