/**
 * `dist/text-index-worker.mjs`: the worker thread in which the warm server builds the text index its saves compare
 * new texts with (services/governance, textIndexWorkerBuilder), so analysing every engram never holds up the hooks
 * and requests it answers.
 * @module
 */
import { runTextIndexWorker } from '../services/index.js';

runTextIndexWorker();
