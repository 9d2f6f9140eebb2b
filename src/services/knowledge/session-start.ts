import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findRepo } from '../../core/index.js';
import { CONFIG_FILE } from './_paths.js';

/**
 * The repository's L0 briefing for a session starting in `cwd`, or null: no knowledge docs here, no briefing yet, or
 * the briefing lives in the file this agent reads on its own. Never throws: SessionStart must not fail because of a
 * bad config. The config reader (and YAML) load only in repositories that have knowledge docs, so every other hook
 * call pays one stat.
 */
export async function briefingForSession(cwd: string, agent: string): Promise<{ text: string; file: string } | null> {
  try {
    const repo = findRepo(cwd);
    if (!repo || !existsSync(join(repo.root, CONFIG_FILE))) return null;
    const { projectBriefing } = await import('./session-briefing.js');
    return projectBriefing(repo.root, agent);
  } catch {
    return null;
  }
}
