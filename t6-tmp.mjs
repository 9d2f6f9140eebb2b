import ortm from 'onnxruntime-node'; const ort = ortm.default ?? ortm;
import { readFileSync, readdirSync } from 'node:fs';
const opts = JSON.parse(process.argv[2]); const gap = Number(process.argv[3]);
const path = '/work/shared/models/ctx-use-256/onnx/model_quantized.onnx';
const t0 = readdirSync('/proc/self/task');
const s = await ort.InferenceSession.create(process.argv[4] === 'buf' ? readFileSync(path) : path, { executionProviders: ['cpu'], ...opts });
const t1 = readdirSync('/proc/self/task');
const ids = [101n, 2023n, 2003n, 1037n, 3231n, 2005n, 1996n, 4248n, 2000n, 2131n, 2009n, 2157n, 102n];
const f = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, ids.length]), attention_mask: new ort.Tensor('int64', BigInt64Array.from(ids.map(() => 1n)), [1, ids.length]), token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), [1, ids.length]) };
await s.run(f);
const now = () => Number(process.hrtime.bigint()) / 1e6; const w = [];
const c0 = process.cpuUsage();
for (let i = 0; i < 200; i++) { const a = now(); await s.run(f); w.push(now() - a); if (gap) await new Promise((r) => setTimeout(r, gap)); }
const cu = process.cpuUsage(c0); w.sort((a, b) => a - b);
const out = (await s.run(f)).last_hidden_state.data; let h = 0; for (const x of out) h = (h * 31 + Math.round(x * 1e6)) | 0;
console.log(process.argv[4] ?? 'path', JSON.stringify(opts), 'gap', gap, 'new threads', t1.length - t0.length, 'wall p50', w[100].toFixed(2), 'p90', w[180].toFixed(2), 'cpu/call', ((cu.user + cu.system) / 1000 / 200).toFixed(2), 'hash', h);
