import * as z from 'zod';

/**
 * Where the caller works: sent with every call, so the server answers each caller in its own place. It says nothing
 * of *who* calls: the actor every write is audited as (and a new engram learned by) is fixed by the process that runs
 * the operation from how the request reached it (`OpContext.actor`; the warm server's socket: the agent through MCP),
 * never taken from the request — a strict schema refuses a caller that names one.
 */
export const CallerSchema = z.strictObject({
  /** The caller's working folder: its repository is the default project, its environment gates search. */
  cwd: z.string().min(1),
  agent: z.enum(['claude', 'codex', 'unknown']),
  /** The caller's session (for the MCP server: one per process, i.e. per agent session). */
  session_id: z.string().min(1).max(200).optional(),
  /** The caller's project (its repository's name), or null outside a repository. */
  project: z.string().nullable(),
});
export type Caller = z.infer<typeof CallerSchema>;
