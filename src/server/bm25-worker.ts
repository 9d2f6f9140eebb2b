/**
 * `dist/bm25-worker.mjs`: the worker thread in which the warm server rebuilds its BM25 base (services/recall,
 * bm25WorkerBuilder), so a rebuild never holds up the hooks and HTTP requests it answers.
 * @module
 */
import { runBm25Worker } from '../services/index.js';

runBm25Worker();
