import { readBriefing } from './briefing.js';
import { loadKnowledgeConfig } from './config.js';

/** The file each agent loads by itself at the repository root: a briefing there is already in its context. */
const OWN_FILE: Record<string, string> = { claude: 'CLAUDE.md', codex: 'AGENTS.md' };

/** The briefing between the markers of the configured file, unless `agent` loads that file itself. */
export function projectBriefing(root: string, agent: string): { text: string; file: string } | null {
  const config = loadKnowledgeConfig(root);
  if (config.briefing.file === OWN_FILE[agent]) return null;
  const text = readBriefing(root, config);
  return text ? { text, file: config.briefing.file } : null;
}
