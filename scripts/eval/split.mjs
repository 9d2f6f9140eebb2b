#!/usr/bin/env node
// The evaluation sets' split rule and checks, shared by the set builders and `--check` (run by a test).
//
// A query belongs to the test split when the first byte of sha256(its text) is divisible by 3 (a third, give or
// take), otherwise to dev. The rule depends on nothing but the query's text, so nobody can move a query between
// splits after seeing a result, and a rewritten query lands wherever its new text says.
//
//   node scripts/eval/split.mjs --check            verify every set in fixtures/ obeys the rule
//   node scripts/eval/split.mjs --write SET SRC    (SET = fixtures folder, SRC = authored lines) write queries-*.jsonl
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const removeStopWords = require('wink-nlp-utils/src/tokens-remove-words.js');
const stem = require('wink-nlp-utils/src/string-stem.js');

// The repository root (a bundled copy of this module is told it, since its own URL is then the bundle's).
export const root = process.env.ENGRAM_REPO_ROOT ?? dirname(dirname(dirname(fileURLToPath(import.meta.url))));
/** The sets built from ../shared (the hand-written fixtures/eval predates the rule and keeps its own files). */
export const SETS = ['eval-conversations', 'eval-lessons', 'eval-dialogue'];

/** `test` or `dev`, from the query text alone. */
export function splitOf(query) {
  return createHash('sha256').update(query).digest()[0] % 3 === 0 ? 'test' : 'dev';
}

/** Content stems, the way BM25 analyses text (src/services/recall/text.ts). */
export function stems(text) {
  const words = (text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter(
    (word) => word.length > 1,
  );
  return new Set(removeStopWords(words).map((word) => stem(word)));
}

/** `lexical` when the query shares at least two content stems with one of its answers, else `paraphrase`; `none`
 * when nothing answers it. Computed, not chosen, so the label cannot flatter a method. */
export function kindOf(query, relevantTexts) {
  if (relevantTexts.length === 0) return 'none';
  const q = stems(query);
  const shared = Math.max(...relevantTexts.map((text) => [...stems(text)].filter((s) => q.has(s)).length));
  return shared >= 2 ? 'lexical' : 'paraphrase';
}

const readJsonl = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

/** Checks one set: ids exist, no query twice, each query in the split its text says. Returns problems. */
export function checkSet(set) {
  const dir = join(root, 'fixtures', set);
  const problems = [];
  const memories = new Map(readJsonl(join(dir, 'memories.jsonl')).map((m) => [m.id, m]));
  const seen = new Set();
  for (const split of ['dev', 'test']) {
    for (const query of readJsonl(join(dir, `queries-${split}.jsonl`))) {
      if (seen.has(query.q)) problems.push(`${set}: '${query.q}' appears twice`);
      seen.add(query.q);
      if (splitOf(query.q) !== split) problems.push(`${set}: '${query.q}' is in ${split} but its hash says ${splitOf(query.q)}`);
      for (const id of query.relevant) if (!memories.has(id)) problems.push(`${set}: '${query.q}' names unknown memory ${id}`);
    }
  }
  return problems;
}

/** Writes queries-dev.jsonl and queries-test.jsonl of a set from parsed queries ({q, relevant, ...extra}). */
export function writeSplits(set, queries) {
  const dir = join(root, 'fixtures', set);
  const memories = new Map(readJsonl(join(dir, 'memories.jsonl')).map((m) => [m.id, m]));
  const out = { dev: [], test: [] };
  const seen = new Set();
  for (const query of queries) {
    if (seen.has(query.q)) throw new Error(`duplicate query: ${query.q}`);
    seen.add(query.q);
    for (const id of query.relevant) if (!memories.has(id)) throw new Error(`unknown memory ${id} in '${query.q}'`);
    const kind = kindOf(query.q, query.relevant.map((id) => memories.get(id).text));
    out[splitOf(query.q)].push(JSON.stringify({ q: query.q, relevant: query.relevant, kind, ...query.extra }));
  }
  for (const split of ['dev', 'test']) writeFileSync(join(dir, `queries-${split}.jsonl`), `${out[split].join('\n')}\n`);
  return { dev: out.dev.length, test: out.test.length };
}

/** Authored conversational lines: `ids | query` with short session prefixes, `-` for unanswerable. */
const PREFIX = {
  kI: 'kimuson-init', kU: 'kimuson-update', gC: 'ghq-colors', hW: 'hello-world',
  cR: 'claude-retry', cS: 'claude-retry-subagent', xR: 'codex-retry', xV: 'codex-vscode',
};
function parseConversational(text) {
  return text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [ids, q] = line.split(' | ');
      const relevant = ids.trim() === '-' ? [] : ids.trim().split(/\s+/).map((id) => id.replace(/^(\w\w):/, (_, p) => `${PREFIX[p]}:`));
      return { q: q.trim(), relevant, extra: {} };
    });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  if (args[0] === '--check') {
    const problems = SETS.filter((set) => existsSync(join(root, 'fixtures', set))).flatMap(checkSet);
    if (problems.length) {
      console.error(problems.join('\n'));
      process.exit(1);
    }
    console.log('ok');
  } else if (args[0] === '--write') {
    const [, set, src] = args;
    const text = readFileSync(src, 'utf8');
    const queries = src.endsWith('.jsonl') ? readJsonl(src).map(({ q, relevant, ...extra }) => ({ q, relevant, extra })) : parseConversational(text);
    console.log(writeSplits(set, queries));
  } else {
    console.error('usage: split.mjs --check | --write SET SRC');
    process.exit(2);
  }
}
