import ortm from 'onnxruntime-node'; const ort = ortm.default ?? ortm;
const path = '/work/shared/models/ctx-use-256/onnx/model_quantized.onnx';
const r0 = process.memoryUsage().rss; const a = performance.now();
const s = await ort.InferenceSession.create(path, { executionProviders: ['cpu'], intraOpNumThreads: 1 });
const b = performance.now(); const r1 = process.memoryUsage().rss;
const s2 = await ort.InferenceSession.create(path, { executionProviders: ['cpu'] });
const c = performance.now(); const r2 = process.memoryUsage().rss;
console.log('create 1-thread', (b - a).toFixed(1), 'ms rss +', ((r1 - r0) / 1e6).toFixed(1), 'MB; second', (c - b).toFixed(1), 'ms rss +', ((r2 - r1) / 1e6).toFixed(1));
