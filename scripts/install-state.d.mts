// Types for install-state.mjs (plain JavaScript so it runs before the build).
export declare const HOOK_ENTRIES: readonly string[];
export declare const RUNTIME_PACKAGES: readonly string[];
export declare const NATIVE_BINDING: string;
export declare const RETRY_AFTER_MS: number;
export declare const STALE_LOCK_MS: number;
export declare function engramHome(
  env?: Record<string, string | undefined>,
  options?: { userHome?: string; cwd?: string },
): string;
export declare function checkInstall(root: string): { ready: boolean; missing: string[] };
export declare function bootstrapFiles(
  root: string,
  home?: string,
): { key: string; state: string; lock: string; log: string };
export interface BootstrapState {
  root: string;
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
export declare function lockIsHeld(lockDir: string, now?: number): boolean;
export declare function startBootstrap(
  root: string,
  options?: { home?: string; reason?: string; force?: boolean },
): 'started' | 'running' | 'backoff' | 'error';
