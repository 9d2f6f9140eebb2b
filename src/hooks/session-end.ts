/**
 * SessionEnd: marks the session ended. Must finish inside Claude Code's 1.5 s budget (Codex clamps to 3 s): one
 * small write. Prints nothing.
 * @module
 */
import { recordSessionEnd } from '../services/index.js';
import { runHook } from './_runtime.js';
import { sessionContext } from './_session.js';
import { SessionEndInputSchema } from './contract.js';

await runHook('SessionEnd', SessionEndInputSchema, (context) => {
  recordSessionEnd(context.store(), sessionContext(context), context.input.reason ?? null, { now: context.now });
});
