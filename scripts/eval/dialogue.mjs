#!/usr/bin/env node
// Builds fixtures/eval-dialogue from its hand-written sources: multi-session dialogues between two people, each
// session dated, and questions about them whose evidence is the turns that hold the answer. Shaped like the public
// long-term conversational-memory benchmarks (each conversation is its own store of turns; questions ask about
// persons, events and dates; single-hop, multi-hop, temporal, inference and unanswerable ones), written without
// looking at any search result (docs/SEARCH.md, "Evaluation sets").
//
// Sources, in fixtures/eval-dialogue/source/:
//   <conversation>.dialogue.txt   `## sNN YYYY-MM-DD` opens a session; `NN Speaker: text` is a turn (numbered in
//                                 order from 01, so a question can name it as sNN:NN); `#` lines are comments
//   <conversation>.questions.txt  `type | sNN:NN sNN:NN … | question`, or `none | - | question` when nothing answers
//
// One memory per turn: id `<conversation>:sNN:NN`, group = the conversation, text `[D Month YYYY] Speaker: text`
// (the session's date, as an importer of dated sessions would keep it). Queries are split into dev and test by the
// hash of their text (scripts/eval/split.mjs), with `group` (search that conversation's store only) and `type`.
// Deterministic: the same sources give the same files, byte for byte.
//
//   node scripts/eval/dialogue.mjs [--check]
//
// --check rebuilds in memory and fails if a committed file differs (a source or this script changed).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kindOf, root, splitOf } from './split.mjs';

export const SET = 'eval-dialogue';
const dir = join(root, 'fixtures', SET);
const sources = join(dir, 'source');
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const TYPES = ['single', 'multi-hop', 'temporal', 'inference', 'none'];

/** `2023-01-08` → `8 January 2023`. */
function spoken(date) {
  const [year, month, day] = date.split('-').map(Number);
  return `${day} ${MONTHS[month - 1]} ${year}`;
}

/** The turns of one conversation, in order. Throws on a malformed line or a turn out of sequence. */
function parseDialogue(conversation, text) {
  const turns = [];
  let session = null;
  let next = 1;
  text.split('\n').forEach((line, index) => {
    const where = `${conversation}.dialogue.txt:${index + 1}`;
    if (line.trim() === '' || line.startsWith('# ')) return;
    const header = /^## (s\d\d) (\d{4}-\d\d-\d\d)$/.exec(line);
    if (header) {
      session = { id: header[1], date: spoken(header[2]) };
      next = 1;
      return;
    }
    const turn = /^(\d\d) ([A-Z][\w-]*): (.+)$/.exec(line);
    if (!turn || !session) throw new Error(`${where}: not a session header or a numbered turn`);
    if (Number(turn[1]) !== next) throw new Error(`${where}: turn ${turn[1]} out of sequence (expected ${String(next).padStart(2, '0')})`);
    next++;
    turns.push({ id: `${conversation}:${session.id}:${turn[1]}`, text: `[${session.date}] ${turn[2]}: ${turn[3]}`, group: conversation, session: `${conversation}:${session.id}` });
  });
  return turns;
}

/** The questions of one conversation. Throws on a malformed line, an unknown type or an unknown turn. */
function parseQuestions(conversation, text, turnIds) {
  return text
    .split('\n')
    .map((line, index) => ({ line, where: `${conversation}.questions.txt:${index + 1}` }))
    .filter(({ line }) => line.trim() !== '' && !line.startsWith('#'))
    .map(({ line, where }) => {
      const parts = line.split(' | ');
      if (parts.length !== 3) throw new Error(`${where}: expected 'type | evidence | question'`);
      const [type, evidence, q] = parts.map((part) => part.trim());
      if (!TYPES.includes(type)) throw new Error(`${where}: unknown type '${type}'`);
      const relevant = evidence === '-' ? [] : evidence.split(/\s+/).map((turn) => `${conversation}:${turn}`);
      if ((type === 'none') !== (relevant.length === 0)) throw new Error(`${where}: 'none' and '-' go together`);
      for (const id of relevant) if (!turnIds.has(id)) throw new Error(`${where}: no turn ${id}`);
      return { q, relevant, group: conversation, type };
    });
}

/** The set's files as text: memories.jsonl, queries-dev.jsonl, queries-test.jsonl. */
export function build() {
  const conversations = readdirSync(sources)
    .filter((file) => file.endsWith('.dialogue.txt'))
    .map((file) => file.slice(0, -'.dialogue.txt'.length))
    .sort();
  const memories = [];
  const queries = [];
  for (const conversation of conversations) {
    const turns = parseDialogue(conversation, readFileSync(join(sources, `${conversation}.dialogue.txt`), 'utf8'));
    memories.push(...turns);
    queries.push(...parseQuestions(conversation, readFileSync(join(sources, `${conversation}.questions.txt`), 'utf8'), new Set(turns.map((t) => t.id))));
  }
  const texts = new Map(memories.map((m) => [m.id, m.text]));
  const seen = new Set();
  const split = { dev: [], test: [] };
  for (const query of queries) {
    if (seen.has(query.q)) throw new Error(`question asked twice: ${query.q}`);
    seen.add(query.q);
    const kind = kindOf(query.q, query.relevant.map((id) => texts.get(id)));
    split[splitOf(query.q)].push(JSON.stringify({ q: query.q, relevant: query.relevant, kind, group: query.group, type: query.type }));
  }
  const lines = (rows) => `${rows.join('\n')}\n`;
  return {
    'memories.jsonl': lines(memories.map((m) => JSON.stringify(m))),
    'queries-dev.jsonl': lines(split.dev),
    'queries-test.jsonl': lines(split.test),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = build();
  if (process.argv.includes('--check')) {
    const stale = Object.entries(files).filter(([name, text]) => {
      try {
        return readFileSync(join(dir, name), 'utf8') !== text;
      } catch {
        return true;
      }
    });
    if (stale.length > 0) {
      console.error(`fixtures/${SET}: ${stale.map(([name]) => name).join(', ')} differ from what the sources give; run node scripts/eval/dialogue.mjs`);
      process.exit(1);
    }
    console.log('ok');
  } else {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const count = (name) => files[name].split('\n').filter(Boolean).length;
    console.log(`${count('memories.jsonl')} turns; ${count('queries-dev.jsonl')} dev and ${count('queries-test.jsonl')} test questions`);
  }
}
