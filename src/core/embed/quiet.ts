/**
 * Runs `fn` with console.log/info/warn/debug silenced and their messages handed to `sink`. Model libraries print
 * diagnostics (transformers.js warns about optional files it probes for); in a hook, stdout is the channel to the
 * agent, so nothing they say may reach it.
 */
export async function quietly<T>(fn: () => Promise<T>, sink: (line: string) => void = () => {}): Promise<T> {
  const saved = { log: console.log, info: console.info, warn: console.warn, debug: console.debug };
  const capture = (...args: unknown[]): void => sink(args.map(String).join(' '));
  console.log = console.info = console.warn = console.debug = capture;
  try {
    return await fn();
  } finally {
    Object.assign(console, saved);
  }
}
