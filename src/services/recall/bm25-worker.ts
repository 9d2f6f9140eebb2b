import { parentPort, Worker, workerData } from 'node:worker_threads';
import { openStore } from '../../core/index.js';
import { buildBm25Snapshot, type Bm25Builder } from './bm25.js';

/** What the worker is asked to do: build the base of the store at `dbPath`, persisting it in `indexDir` if given. */
interface BuildJob {
  dbPath: string;
  indexDir: string | undefined;
}

/**
 * A {@link Bm25Builder} that runs each build in a worker thread started from `script` (a bundle whose entry calls
 * {@link runBm25Worker}: dist/bm25-worker.mjs). wink's documents for 100k engrams take hundreds of megabytes and
 * seconds of CPU; in a worker neither lands on the server's event loop or stays in its heap: the bytes of the packed
 * snapshot come back as one transferred buffer.
 */
export function bm25WorkerBuilder(script: string): Bm25Builder {
  return (job) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const worker = new Worker(script, { workerData: job satisfies BuildJob });
      let answered = false;
      worker.once('message', (bytes: Uint8Array) => {
        answered = true;
        resolve(bytes);
      });
      worker.once('error', reject);
      worker.once('exit', (code) => {
        if (!answered) reject(new Error(`the BM25 build worker exited with code ${code} before answering`));
      });
    });
}

/** The worker's body: open the store, build and persist the base, post the snapshot bytes back. */
export function runBm25Worker(): void {
  if (!parentPort) throw new Error('runBm25Worker runs in a worker thread');
  const { dbPath, indexDir } = workerData as BuildJob;
  // Its own connection: reads in one snapshot (WAL), and prunes the change log once the snapshot is written.
  const store = openStore({ path: dbPath, busyTimeoutMs: 30_000, migrate: false });
  try {
    const bytes = buildBm25Snapshot(store, indexDir);
    parentPort.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
  } finally {
    store.close();
  }
}
