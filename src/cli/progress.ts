import cliProgress from 'cli-progress';
import type { CliIo } from './context.js';

/** A progress display: a bar on an interactive stderr, nothing otherwise (stdout stays clean JSON). */
export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

/** Starts a progress bar labelled `label` on stderr when stderr is a terminal. */
export function progressBar(io: CliIo, label: string): Progress {
  const stream = io.stderr as NodeJS.WriteStream;
  if (!stream.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} ({percentage}%) eta {eta_formatted}`, stream, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (total <= 0) return;
      if (!started) {
        bar.start(total, done);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done);
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
