import type { SessionContext } from '../services/index.js';
import type { HookCommon } from './contract.js';
import type { HookContext } from './_runtime.js';

/** The session facts every hook passes to the capture service. */
export function sessionContext(context: HookContext<HookCommon>): SessionContext {
  const { input } = context;
  return {
    sessionId: input.session_id,
    agent: context.agent,
    cwd: input.cwd,
    transcriptPath: input.transcript_path ?? null,
    model: input.model ?? null,
  };
}
