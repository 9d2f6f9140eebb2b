import { checkInstall, listBootstraps, type RuntimeLocation } from '../../../scripts/install-state.mjs';

/** One first-run bootstrap as `engram status` reports it. */
export interface BootstrapSummary {
  /** The install folder that started it (a hook's plugin folder, or the CLI's). */
  root: string;
  /** The runtime key (`<version>-<lockfile hash>`). */
  key: string;
  /** The runtime folder it builds or built. */
  runtime: string | null;
  /** `running`: its process holds the lock; `interrupted`: it died mid-way (the next hook starts it again). */
  status: 'running' | 'interrupted' | 'failed';
  /** What started it: `hook <entry>` (an agent's hook), `cli`, `manual`. */
  reason: string;
  started_at: string;
  error?: string;
}

/** Where this install's code runs from, and the bootstraps in progress or failed. */
export interface InstallStatus {
  /** The install folder of the running CLI (hooks/run.cjs, bin/engram). */
  root: string;
  /** The folder its dist/ and node_modules/ are in: itself when built in place, else a runtime folder. */
  runtime: string | null;
  kind: RuntimeLocation['kind'] | null;
  /** Bootstraps that are running, were interrupted, or failed last time (done ones are not listed). */
  bootstraps: BootstrapSummary[];
  /** What a person should know: a copy of Engram still bootstrapping (its hooks are silent until then), a failure. */
  notes: string[];
}

/**
 * The install as `engram status` and `engram doctor` see it. The hooks may run from another copy than the CLI (with
 * a folder marketplace Claude Code runs hooks from the source folder while `engram` is the plugin cache's), so every
 * bootstrap recorded in the home is looked at, not only this folder's.
 */
export function installStatus(installRoot: string, home: string, vars: Record<string, string | undefined> = {}): InstallStatus {
  const own = checkInstall(installRoot, { home, env: vars, link: false });
  const bootstraps: BootstrapSummary[] = [];
  for (const state of listBootstraps(home)) {
    if (state.status === 'done') continue;
    const status = state.status === 'failed' ? 'failed' : state.running ? 'running' : 'interrupted';
    bootstraps.push({
      root: state.root,
      key: state.key,
      runtime: state.runtime ?? null,
      status,
      reason: state.reason,
      started_at: state.started_at,
      ...(state.error ? { error: state.error } : {}),
    });
  }
  const notes = bootstraps.map((b) => {
    const whose = b.reason.startsWith('hook') ? "the hooks' copy of Engram" : 'Engram';
    if (b.status === 'running') {
      return `${whose} in ${b.root} is still bootstrapping (installing and building since ${b.started_at}); its hooks stay silent until it finishes, and the sessions they missed are recorded at the next session end`;
    }
    if (b.status === 'interrupted') return `the bootstrap of ${b.root} (started ${b.started_at}) was interrupted; the next hook or engram command starts it again`;
    return `the bootstrap of ${b.root} failed: ${b.error ?? 'unknown error'} (hooks retry it after 10 minutes; see logs/bootstrap.log)`;
  });
  return { root: installRoot, runtime: own.runtime?.dir ?? null, kind: own.runtime?.kind ?? null, bootstraps, notes };
}
