import * as z from 'zod';
import { HOOK_EVENTS } from '../hooks/contract.js';
import { CallerSchema } from '../services/ops/index.js';

/**
 * The server's wire format: one JSON object per line each way, over a Unix socket only the user can open (0600 in
 * a 0700 folder). Every request is validated; a malformed one gets `{ok:false}` and the connection closes.
 */
export const PROTOCOL_VERSION = 1;

const HookCallSchema = z.strictObject({
  event: z.enum(HOOK_EVENTS),
  stdin: z.string(),
  stdinProblem: z.enum(['too-large', 'timeout']).optional(),
  agentFlag: z.string().max(32).optional(),
  envHints: z.strictObject({ codex: z.boolean(), claude: z.boolean() }),
});

export const ServerRequestSchema = z.discriminatedUnion('op', [
  /**
   * Which Engram is asking; a server of another version does not answer it (see server/main.ts). `version`: the hook's
   * Engram version (the fast path, and launchers before the server resolved it); else `root`: the install folder the
   * launcher runs from, and `pluginData` the agent's plugin data folder (where its runtime's pointer is), from which
   * the server finds the runtime's version (server/hook-version.ts). A server older than `root` rejects the call as
   * invalid (strict), and the launcher asks again with the version it reads itself.
   */
  z.strictObject({
    v: z.literal(PROTOCOL_VERSION),
    op: z.literal('hook'),
    version: z.string().max(64).optional(),
    root: z.string().min(1).max(4096).optional(),
    pluginData: z.string().max(4096).optional(),
    call: HookCallSchema,
  }),
  /**
   * `call`: run one operation of services/ops with the server's warm store and search engine (the MCP server, later
   * other surfaces). `params` are validated by the operation itself; `caller` says who asks and from where.
   */
  z.strictObject({
    v: z.literal(PROTOCOL_VERSION),
    op: z.literal('call'),
    version: z.string().max(64).optional(),
    method: z.string().min(1).max(64),
    params: z.unknown(),
    caller: CallerSchema,
  }),
  z.strictObject({ v: z.literal(PROTOCOL_VERSION), op: z.literal('ping') }),
  /** Run queued background jobs soon (SessionEnd sends this). */
  z.strictObject({ v: z.literal(PROTOCOL_VERSION), op: z.literal('wake') }),
  z.strictObject({ v: z.literal(PROTOCOL_VERSION), op: z.literal('stop') }),
  /**
   * `engram ui`: hand out a new per-launch secret for the viewer and say where it is served (the HTTP listener, or
   * one of its own on loopback when that is off, elsewhere or not on `port`).
   */
  z.strictObject({ v: z.literal(PROTOCOL_VERSION), op: z.literal('ui'), port: z.number().int().min(0).max(65_535).optional() }),
]);
export type ServerRequest = z.infer<typeof ServerRequestSchema>;

/** What the server answers. */
export type ServerReply =
  | { ok: true; op: 'hook'; stdout: string; outcome: string; ms: number }
  /** An operation's result, or its EngramError (code and message): the call reached the server and ran. */
  | { ok: true; op: 'call'; result: unknown; ms: number }
  | { ok: true; op: 'call'; error: { code: string; message: string }; ms: number }
  | {
      ok: true;
      op: 'ping';
      pid: number;
      version: string;
      home: string;
      started_at: string;
      requests: number;
      model: string | null;
      mode: 'hybrid' | 'bm25';
    }
  | { ok: true; op: 'wake' | 'stop' }
  /** `url` carries the secret in its fragment (never sent to a server, never in a log). */
  | { ok: true; op: 'ui'; url: string; origin: string; port: number; secret: string }
  | { ok: false; error: string };

/** True when version `a` is newer than `b` (numeric dotted versions; anything else compares as equal). */
export function newerVersion(a: string, b: string): boolean {
  const parse = (version: string): number[] | null => (/^\d+(\.\d+)*$/.test(version) ? version.split('.').map(Number) : null);
  const left = parse(a);
  const right = parse(b);
  if (!left || !right) return false;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  return false;
}

const HOOK_REQUEST_KEYS = new Set(['v', 'op', 'version', 'root', 'pluginData', 'call']);
const HOOK_CALL_KEYS = new Set(['event', 'stdin', 'stdinProblem', 'agentFlag', 'envHints']);
const EVENTS: ReadonlySet<unknown> = new Set(HOOK_EVENTS);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
const optionalText = (value: unknown, min: number, max: number): boolean =>
  value === undefined || (typeof value === 'string' && value.length >= min && value.length <= max);

/**
 * A hook call exactly as launchers send it (a JSON-parsed object), checked by hand against what ServerRequestSchema
 * accepts for `op: 'hook'`: the same keys, types and bounds. The schema's parse of the call was ~0.05 ms of every
 * hook the server answers; anything this does not recognise — another op, an unknown key, a wrong type — is left to
 * the schema, which decides and says what is wrong. test/server/protocol.test.ts holds the two to the same verdicts.
 */
function plainHookRequest(request: unknown): ServerRequest | null {
  if (!isRecord(request) || request.v !== PROTOCOL_VERSION || request.op !== 'hook') return null;
  for (const key in request) if (!HOOK_REQUEST_KEYS.has(key)) return null;
  if (!optionalText(request.version, 0, 64) || !optionalText(request.root, 1, 4096) || !optionalText(request.pluginData, 0, 4096)) return null;
  const call = request.call;
  if (!isRecord(call)) return null;
  for (const key in call) if (!HOOK_CALL_KEYS.has(key)) return null;
  if (!EVENTS.has(call.event) || typeof call.stdin !== 'string' || !optionalText(call.agentFlag, 0, 32)) return null;
  if (call.stdinProblem !== undefined && call.stdinProblem !== 'too-large' && call.stdinProblem !== 'timeout') return null;
  const hints = call.envHints;
  if (!isRecord(hints) || typeof hints.codex !== 'boolean' || typeof hints.claude !== 'boolean') return null;
  for (const key in hints) if (key !== 'codex' && key !== 'claude') return null;
  return request as ServerRequest;
}

/** A request line's parsed JSON as a valid request, or null: the common hook call checked by hand, anything else by the schema. */
export function parseServerRequest(request: unknown): ServerRequest | null {
  const plain = plainHookRequest(request);
  if (plain) return plain;
  const parsed = ServerRequestSchema.safeParse(request);
  return parsed.success ? parsed.data : null;
}
