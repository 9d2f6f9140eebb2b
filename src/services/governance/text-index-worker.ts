import { parentPort, Worker, workerData } from 'node:worker_threads';
import { openStore } from '../../core/index.js';
import { TextIndex, type TextIndexBuilder, type TextIndexData } from './text-index.js';

/** What the worker is asked to do: build the text index of the store at `dbPath`. */
interface BuildJob {
  dbPath: string;
}

/**
 * A {@link TextIndexBuilder} that runs the build in a worker thread started from `script` (a bundle whose entry calls
 * {@link runTextIndexWorker}: dist/text-index-worker.mjs). Analysing 100k texts takes seconds of CPU; in a worker it
 * never lands on the event loop that answers hooks and saves. The index comes back as arrays (transferred) and
 * the strings it interned.
 */
export function textIndexWorkerBuilder(script: string): TextIndexBuilder {
  return (job) =>
    new Promise<TextIndexData>((resolve, reject) => {
      const worker = new Worker(script, { workerData: job satisfies BuildJob });
      let answered = false;
      worker.once('message', (data: TextIndexData) => {
        answered = true;
        resolve(data);
      });
      worker.once('error', reject);
      worker.once('exit', (code) => {
        if (!answered) reject(new Error(`the text index worker exited with code ${code} before answering`));
      });
    });
}

/** The worker's body: open the store, build the index in one read snapshot, post it back. */
export function runTextIndexWorker(): void {
  if (!parentPort) throw new Error('runTextIndexWorker runs in a worker thread');
  const { dbPath } = workerData as BuildJob;
  const store = openStore({ path: dbPath, busyTimeoutMs: 30_000, migrate: false });
  try {
    const data = TextIndex.build(store).toData();
    const arrays = [data.engramOf, data.statusOf, data.projectOf, data.recordAt, data.printA, data.printB, data.arena, data.stems.offsets, data.stems.list, data.words.offsets, data.words.list];
    parentPort.postMessage(data, arrays.map((array) => array.buffer as ArrayBuffer));
  } finally {
    store.close();
  }
}
