#!/usr/bin/env node
// Compares V8 heap snapshots (bench/soak.mjs --heap-snapshots writes them) by constructor: count and shallow size of
// each (node type, name) in the first and the last snapshot, the largest growths first. Strings and numbers are
// grouped by type (their names are their contents).
//
//   node bench/heap-diff.mjs first.heapsnapshot last.heapsnapshot [--top 30] [--json]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const files = args.filter((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--top');
const top = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 30;
if (files.length < 2) {
  process.stderr.write('usage: node bench/heap-diff.mjs first.heapsnapshot last.heapsnapshot [--top 30] [--json]\n');
  process.exit(2);
}

/** Count and shallow bytes per "type name" of one snapshot. */
function summarise(file) {
  const { snapshot, nodes, strings } = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map();
  let total = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    const size = nodes[i + sizeAt];
    const name = ['string', 'concatenated string', 'sliced string', 'number', 'heap number'].includes(type) ? '' : strings[nodes[i + nameAt]].slice(0, 60);
    const key = `${type} ${name}`.trim();
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += size;
    groups.set(key, group);
    total += size;
  }
  return { groups, total, nodes: nodes.length / width };
}

const first = summarise(files[0]);
const last = summarise(files.at(-1));
const keys = new Set([...first.groups.keys(), ...last.groups.keys()]);
const rows = [...keys]
  .map((key) => {
    const a = first.groups.get(key) ?? { count: 0, bytes: 0 };
    const b = last.groups.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: [a.count, b.count], kb: [Math.round(a.bytes / 1024), Math.round(b.bytes / 1024)], delta_kb: Math.round((b.bytes - a.bytes) / 1024), delta_count: b.count - a.count };
  })
  .sort((x, y) => y.delta_kb - x.delta_kb);
const result = { first: files[0], last: files.at(-1), total_kb: [Math.round(first.total / 1024), Math.round(last.total / 1024)], nodes: [first.nodes, last.nodes], grew: rows.slice(0, top), shrank: rows.slice(-Math.min(10, top)).reverse() };
if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
else {
  process.stdout.write(`heap ${result.total_kb[0]} KB → ${result.total_kb[1]} KB (${result.nodes[0]} → ${result.nodes[1]} objects)\n\n`);
  const line = (r) => `${String(r.delta_kb).padStart(8)} KB ${String(r.delta_count).padStart(8)}   ${String(r.kb[0]).padStart(7)} → ${String(r.kb[1]).padStart(7)} KB  ${String(r.count[0]).padStart(7)} → ${String(r.count[1]).padStart(7)}  ${r.key}\n`;
  process.stdout.write(`grew most (Δ KB, Δ count, KB, count, type name)\n${result.grew.map(line).join('')}\nshrank most\n${result.shrank.map(line).join('')}`);
}
