/**
 * Stop: counts the finished turn. Prints nothing — a Stop hook's output would keep the agent going (Claude Code)
 * or fail the hook (Codex, which accepts only JSON here).
 * @module
 */
import { recordTurnEnd } from '../services/index.js';
import { runHook } from './_runtime.js';
import { sessionContext } from './_session.js';
import { StopInputSchema } from './contract.js';

await runHook('Stop', StopInputSchema, (context) => {
  recordTurnEnd(context.store(), sessionContext(context), { now: context.now });
});
