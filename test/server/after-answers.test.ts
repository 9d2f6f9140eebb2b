/**
 * Work left for after a request's answer (server/after-answers.ts): run once the requests received with it are
 * answered too. The server answers a hook through a chain of promises (the handler's awaits), so two hooks read in one
 * turn (both ids in one read of the mailbox pipe) are modelled the same way here.
 */
import { describe, expect, it } from 'vitest';
import { afterAnswers } from '../../src/server/after-answers.js';

/** A request answered after a few awaits, as the server's reply() chain does, leaving `work` behind. */
async function answer(name: string, happened: string[], queue: (work: Array<() => void>) => void): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  happened.push(`answer ${name}`);
  queue([() => happened.push(`record ${name}`), () => happened.push(`log ${name}`)]);
}

describe('work after answers', () => {
  it('runs after the answers of the requests received in the same turn, in the order queued', async () => {
    const happened: string[] = [];
    const after = afterAnswers((error) => happened.push(`error ${String(error)}`));
    // Two hooks posted together: both calls read in one turn.
    void answer('a', happened, (work) => after.queue(work));
    void answer('b', happened, (work) => after.queue(work));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(happened).toEqual(['answer a', 'answer b', 'record a', 'log a', 'record b', 'log b']);
  });

  it('runs the rest when one piece of work throws, and reports it', async () => {
    const errors: unknown[] = [];
    const ran: string[] = [];
    const after = afterAnswers((error) => errors.push(error));
    after.queue([
      () => {
        throw new Error('disk full');
      },
      () => ran.push('log line'),
    ]);
    expect(ran).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['log line']);
    expect(errors).toEqual([new Error('disk full')]);
  });

  it('flush runs what is queued at once (a server that stops), and only once', async () => {
    const ran: string[] = [];
    const after = afterAnswers(() => {});
    after.queue([() => ran.push('record')]);
    after.flush();
    expect(ran).toEqual(['record']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['record']);
  });
});
