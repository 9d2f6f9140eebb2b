/**
 * What a request leaves to do once it is answered — a hook's record of what it showed, its session row, its log line —
 * run after the answers of the requests already received: in a setImmediate, which comes after this turn's I/O
 * callbacks and their promise chains. Two hooks posted together (parallel tool calls: both ids in one read of the
 * mailbox pipe) are then both answered before either's writes (~1 ms each) run; run inline, the second hook waited for
 * the first one's. Work runs in the order it was queued; what a queued record will show is already counted as shown
 * for the requests answered meanwhile (services/inject's unrecorded set).
 * @module
 */

/** Work queued after answers; `flush` runs what is queued now (a server that stops). */
export interface AfterAnswers {
  /** Queues `work` to run in order, each on its own: one that throws is reported, the rest still run. */
  queue(work: ReadonlyArray<() => void>): void;
  flush(): void;
}

export function afterAnswers(onError: (error: unknown) => void): AfterAnswers {
  const pending: Array<() => void> = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    for (let next = pending.shift(); next; next = pending.shift()) {
      try {
        next();
      } catch (error) {
        onError(error);
      }
    }
  };
  return {
    queue(work) {
      if (work.length === 0) return;
      pending.push(...work);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
