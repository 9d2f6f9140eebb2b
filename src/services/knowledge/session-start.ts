import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findRepo } from '../../core/index.js';
import { readBriefing } from './briefing.js';
import { CONFIG_FILE, loadKnowledgeConfig } from './config.js';

/** The file each agent loads by itself at the repository root: a briefing there is already in its context. */
const OWN_FILE: Record<string, string> = { claude: 'CLAUDE.md', codex: 'AGENTS.md' };

/**
 * The repository's L0 briefing for a session starting in `cwd`, or null: no knowledge docs here, no briefing yet, or
 * the briefing lives in the file this agent reads on its own (CLAUDE.md for Claude Code, AGENTS.md for Codex), where
 * injecting it again would only spend context. Never throws: SessionStart must not fail because of a bad config.
 */
export function briefingForSession(cwd: string, agent: string): { text: string; file: string } | null {
  try {
    const repo = findRepo(cwd);
    if (!repo || !existsSync(join(repo.root, CONFIG_FILE))) return null;
    const config = loadKnowledgeConfig(repo.root);
    if (config.briefing.file === OWN_FILE[agent]) return null;
    const text = readBriefing(repo.root, config);
    return text ? { text, file: config.briefing.file } : null;
  } catch {
    return null;
  }
}
