/** One line of `engram doctor`. */
export interface Check {
  name: string;
  /** ok: works; degraded: works with less (and says why); error: broken; skipped: not applicable here. */
  status: 'ok' | 'degraded' | 'error' | 'skipped';
  detail: string;
  /** A command or action that fixes it. */
  fix?: string;
}

/** `engram doctor`: every check, and the worst status among them. */
export interface DoctorReport {
  status: 'ok' | 'degraded' | 'error';
  checks: Check[];
}
