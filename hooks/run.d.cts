// Types for run.cjs (plain CommonJS: the hook launcher runs before any build, on every agent event).

/** The compiled better-sqlite3 addon, relative to a runtime folder. */
export declare const NATIVE_BINDING: string;
/** The hook fast path, relative to a runtime folder. */
export declare const FAST_PATH: string;
/** `{version, built_at}` beside the bundles, relative to a runtime folder. */
export declare const BUILD_INFO: string;
/** Each hook entry's event, and how long its hook waits for the server's answer (ms). */
export declare const HOOK_ENTRIES: {
  readonly 'session-start': { readonly event: 'SessionStart'; readonly waitMs: number };
  readonly 'user-prompt-submit': { readonly event: 'UserPromptSubmit'; readonly waitMs: number };
  readonly 'pre-tool-use': { readonly event: 'PreToolUse'; readonly waitMs: number };
  readonly 'post-tool-use': { readonly event: 'PostToolUse'; readonly waitMs: number };
  readonly 'post-tool-use-failure': { readonly event: 'PostToolUseFailure'; readonly waitMs: number };
  readonly stop: { readonly event: 'Stop'; readonly waitMs: number };
  readonly 'session-end': { readonly event: 'SessionEnd'; readonly waitMs: number };
};
export declare const MAX_STDIN_BYTES: number;
/** A call id in the hooks' mailbox. */
export declare const MAILBOX_ID: RegExp;
/** The most bytes one pipe write is atomic in: a hook's call line up to this goes down the mailbox's pipe. */
export declare const PIPE_BUF: number;

type Env = Record<string, string | undefined>;
export declare function engramHome(env?: Env, options?: { userHome?: string; cwd?: string }): string;
export declare function folderKey(path: string): string;
export declare function pointerFile(root: string, env?: Env): string;
export declare function lockStamp(root: string): string;
export declare function findRuntime(root: string, env?: Env): { dir: string; kind: 'in-place' | 'runtime'; key?: string } | null;

/** What was read from stdin. */
export interface StdinText {
  text: string;
  tooLarge: boolean;
  timedOut: boolean;
}
export declare function readStdinSync(fd?: number, maxBytes?: number): StdinText | { rest: Buffer[] };

/** Why the server's mailbox gave no answer. */
export type MailboxFailure = 'refused' | 'lost' | 'timeout' | 'bad-reply';
export declare function mailboxFiles(dir: string, id: string): { request: string; claimed: string; withdrawn: string; reply: string };
export declare function mailboxOf(home: string): { fifo: string; dir: string };
/** The shell front's pipe (hooks/run.sh) and the file holding the pid of the server that reads it. */
export declare function shellMailboxOf(home: string): { fifo: string; pid: string };
/** The mailbox's pipe opened for writing, or the error code of the attempt (`ENOENT`: no pipe; `ENXIO`: no reader). */
export type OpenedPipe = { fd: number } | { error: string | undefined };
/** Opens the pipe and writes a wake-up (an empty line) down it, before the hook reads stdin; the post takes the pipe. */
export declare function wakeServer(mailbox: { fifo: string; dir: string }): OpenedPipe;
export declare function postToMailbox<T>(mailbox: { fifo: string; dir: string }, request: unknown, timeoutMs: number, opened?: OpenedPipe): { reply: T } | { failure: MailboxFailure } | null;
export declare function answerAndExit(stdout: string, after?: () => void): void;

/**
 * What the launcher did before handing a hook to the fast path: what it read from stdin, and what asking the warm
 * server through its mailbox gave (`not-asked`: server off, unusable stdin, or a server that could not tell the
 * hook's version from its install folder while the launcher found no runtime version either; `absent`: no mailbox, so
 * the socket is asked; `declined`: the server answered but not this call); `runtime`: what the launcher's own runtime
 * lookup found, when it made one (it asks the server with its install folder first, and looks only if needed).
 */
export interface Handover {
  stdin: StdinText | { rest: Buffer[] };
  mailbox: 'not-asked' | 'absent' | MailboxFailure | 'declined';
  runtime?: { dir: string; kind: 'in-place' | 'runtime'; key?: string } | null;
}
