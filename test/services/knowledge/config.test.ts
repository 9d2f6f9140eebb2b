import { describe, expect, it } from 'vitest';
import { defaultConfigYaml, KnowledgeConfigSchema, parseKnowledgeConfig } from '../../../src/services/knowledge/config.js';
import { thrown } from '../../_helpers.js';

/** The config exactly as seed 002 shows it. */
const SEED_CONFIG = `# .engram/config.yaml
living_docs:
  timeline: docs/decisions/timeline.md
  concepts: docs/decisions/concept_registry.md
  epistemic: docs/decisions/epistemic_state.md
  workflows: docs/decisions/workflow_registry.md

graveyard:
  concepts: docs/decisions/concept_graveyard.md
  epistemic: docs/decisions/epistemic_graveyard.md

briefing: # L0 target
  file: CLAUDE.md
  section: "## Project Knowledge Briefing"

sources:
  issues: local_data/issues/
  docs:
    - docs/working/
    - docs/archive/
    - docs/specs/
  sessions:
    format: claude-code           # Built-in: claude-code. Planned: codex.
    path: ~/.claude/history.jsonl  # Default for claude-code format
    project_match:                 # Filter sessions to this project (substring match on project path)
      - my-project

thresholds:
  orphan_triage: 50
  contested_review_days: 14
  stale_unverified_days: 30
  workflow_repetition: 3

budget:
  context_limit_chars: 600000
  instructions_overhead: 10000
  max_chunk_chars: 200000

model: sonnet  # or any LLM with file editing
`;

describe('parseKnowledgeConfig', () => {
  it('accepts the seed config as written, with defaults for what it leaves out', () => {
    const config = parseKnowledgeConfig(SEED_CONFIG, '.engram/config.yaml');
    expect(config.sources.sessions).toEqual({ format: 'claude-code', path: '~/.claude/history.jsonl', project_match: ['my-project'] });
    expect(config.sources.issues).toBe('local_data/issues/');
    expect(config.budget.max_chunk_chars).toBe(200_000);
    expect(config.fold.max_retries).toBe(2);
    expect(config.briefing.max_lines).toBe(100);
    expect(config.model).toBe('sonnet');
  });

  it('accepts the config engram docs init writes', () => {
    const config = parseKnowledgeConfig(defaultConfigYaml({ projectMatch: 'shop' }), 'x');
    expect(config).toEqual({ ...KnowledgeConfigSchema.parse({}), sources: { docs: [], sessions: [{ format: 'claude-code' }, { format: 'codex' }] } });
  });

  it('names the file, the line and the key of every problem', () => {
    const text = SEED_CONFIG.replace('max_chunk_chars: 200000', 'max_chunk_chars: lots').replace('model: sonnet', 'modle: sonnet').replace('timeline: docs/decisions/timeline.md', 'timeline: ../outside.md');
    const error = thrown(() => parseKnowledgeConfig(text, '/repo/.engram/config.yaml'));
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain('/repo/.engram/config.yaml:3:3: living_docs.timeline: must be a path inside the repository');
    expect(error?.message).toContain('/repo/.engram/config.yaml:37:3: budget.max_chunk_chars: Invalid input: expected number, received string');
    expect(error?.message).toContain('/repo/.engram/config.yaml:39:1: modle: unknown key');
    expect(error?.details?.errors).toHaveLength(3);
  });

  it('reports YAML syntax errors with their position', () => {
    const error = thrown(() => parseKnowledgeConfig('budget:\n  max_chunk_chars: [1\n', 'c.yaml'));
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toMatch(/^c\.yaml is not valid YAML: c\.yaml:\d+:\d+: /);
  });

  it('rejects a duplicate key rather than keeping the last one', () => {
    expect(thrown(() => parseKnowledgeConfig('model: a\nmodel: b\n', 'c.yaml'))?.code).toBe('CONFIG_INVALID');
  });
});
