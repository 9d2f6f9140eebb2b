import ortm from 'onnxruntime-node'; const ort = ortm.default ?? ortm;
import { readFileSync, readdirSync } from 'node:fs';
const opts = JSON.parse(process.argv[2]);
const buf = readFileSync('/work/shared/models/ctx-use-256/onnx/model_quantized.onnx');
const s = await ort.InferenceSession.create(buf, { executionProviders: ['cpu'], ...opts });
const ids = [101n, 2023n, 2003n, 1037n, 3231n, 102n];
const f = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, 6]), attention_mask: new ort.Tensor('int64', BigInt64Array.from(ids.map(() => 1n)), [1, 6]), token_type_ids: new ort.Tensor('int64', new BigInt64Array(6), [1, 6]) };
const threads = () => Object.fromEntries(readdirSync('/proc/self/task').map((t) => { const st = readFileSync(`/proc/self/task/${t}/stat`, 'utf8'); const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')); const rest = st.slice(st.lastIndexOf(')') + 2).split(' '); return [`${t}:${name}`, Number(rest[11]) + Number(rest[12])]; }));
const before = threads(); const c0 = process.cpuUsage();
const gap = Number(process.argv[3]);
for (let i = 0; i < 100; i++) { await s.run(f); await new Promise((r) => setTimeout(r, gap)); }
const after = threads(); const cu = process.cpuUsage(c0);
console.log(JSON.stringify(opts), 'gap', gap, 'cpu ms/tick', ((cu.user + cu.system) / 1000 / 100).toFixed(2), Object.entries(after).filter(([k, v]) => v - (before[k] ?? 0) > 1).map(([k, v]) => `${k}=${v - (before[k] ?? 0)}`).join(' '));
