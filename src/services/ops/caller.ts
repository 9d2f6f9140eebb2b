import * as z from 'zod';

/** Who is calling and from where: sent with every call, so the server answers each caller in its own place. */
export const CallerSchema = z.strictObject({
  /** `agent` through MCP; threaded into every write (issue 15 records it as `learned_by`). */
  actor: z.enum(['agent', 'user']),
  /** The caller's working folder: its repository is the default project, its environment gates search. */
  cwd: z.string().min(1),
  agent: z.enum(['claude', 'codex', 'unknown']),
  /** The caller's session (for the MCP server: one per process, i.e. per agent session). */
  session_id: z.string().min(1).max(200).optional(),
  /** The caller's project (its repository's name), or null outside a repository. */
  project: z.string().nullable(),
});
export type Caller = z.infer<typeof CallerSchema>;
