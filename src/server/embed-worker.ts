/**
 * `dist/embed-worker.mjs`: a worker thread of an embedding pool (core/embed/pool.ts). It loads its own copy of the
 * model and embeds the texts it is sent, so a bulk job (`engram import`, `engram reindex`) uses every core. The CLI
 * starts it from the same dist/ folder as the server's other workers.
 */
import { runEmbedWorker } from '../core/index.js';

runEmbedWorker();
