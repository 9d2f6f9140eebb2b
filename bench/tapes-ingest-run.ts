// The ingest benchmark itself; bench/tapes-ingest.mjs bundles and runs it. Prints JSON lines, asserts nothing.
//
// The shared fixture transcripts, each scaled up to ~--mb MB by repeating its records with fresh uuids and tool ids
// (so nothing merges away), are recorded as tapes end to end: adapt → redact → serialise → zstd → write once (what
// ingest does per transcript; discovery and cursors, which cost a stat per unchanged session, are not timed). The
// baseline in the same run is reading the same bytes and JSON.parse of every line, the floor any adapter pays.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordTranscript } from '../src/services/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const TARGET_MB = Number(option('--mb', '8'));
const RUNS = Number(option('--runs', '3'));
const FIXTURES = join(process.cwd(), '..', 'shared', 'fixtures', 'transcripts');

/** A transcript repeated to about `bytes`, every id made unique per copy so each copy is new content. */
function scaled(text: string, bytes: number): string {
  const lines = text.split('\n').filter(Boolean);
  const out: string[] = [];
  let size = 0;
  for (let copy = 0; size < bytes; copy++) {
    for (const line of lines) {
      const renamed = line.replace(/("(?:uuid|parentUuid|id|tool_use_id|call_id|leafUuid|promptId|requestId)":")([^"]+)"/g, `$1$2-c${copy}"`);
      out.push(renamed);
      size += Buffer.byteLength(renamed) + 1;
    }
  }
  return `${out.join('\n')}\n`;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const work = mkdtempSync(join(tmpdir(), 'engram-bench-ingest-'));
try {
  const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.jsonl') && !name.includes('__subagent'));
  let totalBytes = 0;
  let totalTapeBytes = 0;
  const recordMs: number[] = [];
  const parseMs: number[] = [];
  for (const name of names) {
    const text = scaled(readFileSync(join(FIXTURES, name), 'utf8'), TARGET_MB * 1024 * 1024);
    const path = join(work, name);
    writeFileSync(path, text);
    totalBytes += Buffer.byteLength(text);
    for (let run = 0; run < RUNS; run++) {
      const home = join(work, `home-${name}-${run}`);
      let started = performance.now();
      const body = readFileSync(path, 'utf8');
      let records = 0;
      for (const line of body.split('\n')) if (line) records += JSON.parse(line) ? 1 : 0;
      parseMs.push(performance.now() - started);
      started = performance.now();
      const result = await recordTranscript({ path, cwd: work, home });
      recordMs.push(performance.now() - started);
      if (run === 0) totalTapeBytes += result.tapes.reduce((sum, tape) => sum + statSync(tape.path).size, 0);
      if (records === 0 || result.tapes.length === 0) throw new Error(`nothing recorded from ${name}`);
    }
  }
  const mb = totalBytes / (1024 * 1024);
  // Medians per run over all fixtures: sum of the per-fixture medians.
  const perRun = (values: number[]) => {
    let sum = 0;
    for (let i = 0; i < values.length; i += RUNS) sum += median(values.slice(i, i + RUNS));
    return sum;
  };
  const record = perRun(recordMs);
  const parse = perRun(parseMs);
  console.log(
    JSON.stringify({
      bench: 'tapes-ingest',
      fixtures: names.length,
      transcript_mb: Number(mb.toFixed(1)),
      record_ms: Math.round(record),
      record_mb_per_s: Number((mb / (record / 1000)).toFixed(2)),
      baseline_parse_mb_per_s: Number((mb / (parse / 1000)).toFixed(2)),
      ratio_to_parse: Number((record / parse).toFixed(2)),
      tape_bytes_per_transcript_mb: Math.round(totalTapeBytes / mb),
      target_mb_per_s: 5,
    }),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
