// The explain benchmark itself; bench/tapes-explain.mjs bundles and runs it. Prints JSON lines, asserts nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  explainSpan,
  INDEX_PROFILES,
  openEvidenceIndex,
  percentile,
  rebuildIndex,
  type IndexProfile,
  type LoadedTape,
  type TapeEvent,
} from '../src/services/index.js';
import { seededRandom } from './_random.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const TAPES = Number(option('--tapes', '1000'));
const QUERIES = Number(option('--queries', '200'));
const PROFILE = option('--profile', 'default') as IndexProfile;
if (!(PROFILE in INDEX_PROFILES)) throw new Error(`unknown profile ${PROFILE}`);
const FILES = 200;

/** An event without its time and source (distributed over the kinds, so each literal is checked against its own). */
type Body = TapeEvent extends infer E ? (E extends TapeEvent ? Omit<E, 't' | 'source'> : never) : never;

// Deterministic pseudo-random numbers, so every run builds the same tapes.
const random = seededRandom(7);
const int = (n: number): number => Math.floor(random() * n);
const WORDS = 'token retry cache parser config session user request handler error timeout stream buffer index query span tape edit read write commit branch merge lock queue worker payload schema'.split(' ');
const word = (): string => WORDS[int(WORDS.length)]!;
const sentence = (n: number): string => Array.from({ length: n }, word).join(' ');
let lineCounter = 0;
const codeLine = (): string => {
  lineCounter++;
  return `  const ${word()}_${lineCounter} = ${word()}${int(3) ? '.' + word() : ''}(${word()}_${int(500)}, ${int(1000)});`;
};
const block = (lines: number): string[] => Array.from({ length: lines }, codeLine);

// The project: 200 files of 60-120 lines that tapes read and edit; each edit replaces a few lines in place.
const files = Array.from({ length: FILES }, (_, i) => ({ path: `src/module${i}.ts`, lines: block(60 + int(60)) }));

function makeTape(n: number): LoadedTape {
  const start = Date.UTC(2026, 0, 1) + n * 3_600_000;
  const source = { harness: n % 3 ? 'claude' : 'codex', session_id: `session-${n}` } as const;
  const events: Body[] = [
    { k: 'meta', label: 'session', cwd: '/repo' },
    { k: 'msg.in', text: `<system-reminder>The repository uses strict TypeScript.</system-reminder> ${sentence(20)}` },
  ];
  for (let step = 0; step < 6; step++) {
    const file = files[int(FILES)]!;
    const at = int(file.lines.length - 20);
    const span = file.lines.slice(at, at + 20);
    events.push({ k: 'msg.out', text: sentence(40) });
    events.push({ k: 'tool.call', tool: 'Read', call_id: `c${n}-${step}`, args: { file_path: file.path } });
    events.push({ k: 'tool.result', tool: 'Read', call_id: `c${n}-${step}`, stdout: file.lines.join('\n'), is_error: false });
    events.push({ k: 'code.read', file: file.path, range: [1, file.lines.length], text: file.lines.join('\n') });
    if (step % 2 === 0) {
      const replaced = span.slice(0, 6);
      const written = [...replaced.slice(0, 3), ...block(4)];
      file.lines.splice(at, 6, ...written);
      events.push({
        k: 'code.edit', file: file.path, op: 'edit', before_range: [at + 1, at + 6], after_range: [at + 1, at + 7],
        before_text: replaced.join('\n'), after_text: written.join('\n'), before_hash: null, after_hash: null, call_id: `e${n}-${step}`,
      });
    }
    events.push({ k: 'tool.result', tool: 'Bash', call_id: `b${n}-${step}`, stdout: `${sentence(30)}\n${sentence(30)}`, is_error: false });
  }
  events.push({ k: 'msg.out', text: sentence(60) });
  return {
    tape_id: `tape${String(n).padStart(5, '0')}`,
    path: `/bench/tape${n}.jsonl.zst`,
    events: events.map((event, i) => ({ ...event, t: new Date(start + i * 1000).toISOString(), source }) as TapeEvent),
  };
}

const tapes = Array.from({ length: TAPES }, (_, n) => makeTape(n));
const dir = mkdtempSync(join(tmpdir(), 'engram-bench-explain-'));
try {
  const path = join(dir, 'index.sqlite');
  const build = rebuildIndex(path, tapes, { profile: PROFILE });
  const index = openEvidenceIndex(path, { profile: PROFILE });
  const contentBytes = index.db.prepare('select sum(content_bytes) from tapes').pluck().get() as number;
  const jsonlBytes = tapes.reduce((sum, tape) => sum + tape.events.reduce((s, e) => s + JSON.stringify(e).length + 1, 0), 0);
  console.log(JSON.stringify({
    bench: 'index', profile: PROFILE, tapes: TAPES, build_ms: build.ms, fingerprints: build.fingerprints, edges: build.edges,
    continuations: build.continuations, index_mb: +(build.bytes / 1e6).toFixed(2), content_mb: +(contentBytes / 1e6).toFixed(2),
    jsonl_mb: +(jsonlBytes / 1e6).toFixed(2), index_mb_per_content_mb: +(build.bytes / contentBytes).toFixed(2),
  }));
  const latencies: number[] = [];
  let found = 0;
  for (let q = 0; q < QUERIES; q++) {
    const file = files[int(FILES)]!;
    const length = 10 + int(21);
    const at = int(file.lines.length - length);
    const text = file.lines.slice(at, at + length).join('\n');
    const started = performance.now();
    const response = explainSpan(index, { file: file.path, start: at + 1, end: at + length, text }, { brief: true });
    latencies.push(performance.now() - started);
    if (response.total > 0) found++;
  }
  latencies.sort((a, b) => a - b);
  console.log(JSON.stringify({
    bench: 'explain', profile: PROFILE, queries: QUERIES, found, p50_ms: +percentile(latencies, 50).toFixed(2), p95_ms: +percentile(latencies, 95).toFixed(2),
  }));
  index.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
