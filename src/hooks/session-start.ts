/**
 * SessionStart (startup | resume | clear | compact): records the session. Prints nothing.
 * @module
 */
import { recordSessionStart } from '../services/index.js';
import { runHook } from './_runtime.js';
import { sessionContext } from './_session.js';
import { SessionStartInputSchema } from './contract.js';

await runHook('SessionStart', SessionStartInputSchema, (context) => {
  recordSessionStart(context.store(), sessionContext(context), context.input.source ?? null, { now: context.now });
});
