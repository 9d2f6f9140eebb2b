// Types for install-state.mjs (plain JavaScript so it runs before the build).
export declare const HOOK_ENTRIES: readonly string[];
export declare const RUNTIME_PACKAGES: readonly string[];
export declare const NATIVE_BINDING: string;
export declare const BUNDLES: readonly string[];
export declare const BUILD_INPUTS: readonly string[];
export declare const RUNTIME_STAMP: string;
export declare const RETRY_AFTER_MS: number;
export declare const STALE_LOCK_MS: number;
export declare function engramHome(
  env?: Record<string, string | undefined>,
  options?: { userHome?: string; cwd?: string },
): string;

/** Where an install folder's code runs from: the folder itself (built in place) or a runtime folder. */
export interface RuntimeLocation {
  dir: string;
  kind: 'in-place' | 'runtime';
  key?: string;
}
type Env = Record<string, string | undefined>;
export declare function findRuntime(root: string, env?: Env): RuntimeLocation | null;
export declare function folderKey(path: string): string;
export declare function lockStamp(root: string): string;
export declare function pointerFile(root: string, env?: Env): string;
export declare function pluginDataDir(env?: Env): string | null;
export declare function runtimeKey(root: string): string;
export declare function runtimeBase(env?: Env, home?: string): string;
export declare function missingFiles(dir: string): string[];
export declare function readRuntimeStamp(dir: string): { key: string; built_from: string; node: string; built_at: string } | null;
export declare function isRuntimeFor(dir: string, key: string): boolean;
export declare function collectOldRuntimes(keep: string, home?: string): string[];
export declare function linkRuntime(root: string, dir: string, key: string, home?: string, env?: Env): void;
export declare function locateRuntime(root: string, options?: { env?: Env; home?: string; link?: boolean }): RuntimeLocation | null;
export declare function checkInstall(
  root: string,
  options?: { env?: Env; home?: string; link?: boolean },
): { ready: boolean; missing: string[]; runtime: RuntimeLocation | null; expected: string };
export declare function bootstrapFiles(
  root: string,
  home?: string,
): { key: string; state: string; lock: string; log: string };
export interface BootstrapState {
  root: string;
  key?: string;
  runtime?: string | null;
  reason: string;
  pid: number;
  started_at: string;
  status: 'running' | 'done' | 'failed';
  steps?: string[];
  error?: string;
  finished_at?: string;
  seconds?: number;
}
export declare function readBootstrapState(root: string, home?: string): BootstrapState | null;
export declare function listBootstraps(home?: string): Array<BootstrapState & { key: string; running: boolean }>;
export declare function lockIsHeld(lockDir: string, now?: number): boolean;
export declare function startBootstrap(
  root: string,
  options?: { home?: string; reason?: string; force?: boolean; rebuildNative?: boolean },
): 'started' | 'running' | 'backoff' | 'error';
