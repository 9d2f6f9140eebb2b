import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRIEFING_BEGIN, BRIEFING_END, generateBriefing, readBriefing, withBriefingSection, writeBriefing } from '../../../src/services/knowledge/briefing.js';
import { KnowledgeConfigSchema } from '../../../src/services/knowledge/config.js';
import { readDocSet } from '../../../src/services/knowledge/docset.js';
import { ROOT, tempDir } from '../../_helpers.js';

const config = KnowledgeConfigSchema.parse({});

function seedProject(): string {
  const root = tempDir();
  mkdirSync(join(root, 'docs', 'decisions'), { recursive: true });
  const seed = join(ROOT, 'fixtures', 'knowledge', 'seed');
  for (const name of readdirSync(seed)) copyFileSync(join(seed, name), join(root, 'docs', 'decisions', name));
  return root;
}

describe('generateBriefing', () => {
  it('puts what must not be built on first, then open questions, workflows and live concepts', () => {
    const set = readDocSet(config, seedProject());
    const lines = generateBriefing(set, config, { now: new Date('2026-11-25T00:00:00Z'), chunk: 7 });
    const text = lines.join('\n');
    expect(lines[0]).toContain('after chunk 7');
    expect(lines[0]).toContain('5 live concepts (2 dead or evolved), 2 claims (1 refuted, 1 contested, 0 unverified), 2 current workflows');
    expect(text.indexOf('E001 74% win rate claim — refuted')).toBeLessThan(text.indexOf('E007 2x_pullback edge (contested): Do NOT build features assuming the edge exists.'));
    expect(text).toContain('C012 proximity_pruning — DEAD');
    expect(text).toContain('W007 Investigation Protocol: Deterministic debugging — trace against real data, never speculate');
    expect(text).toContain('C042 check_level_hits — `SignalDetector.check_level_hits()`, `level_tracking.py`');
    expect(text).toContain('C043 TradeLogPanel (HAS DEBT)');
    expect(text).toContain('Phase: Structure-driven pruning (2025-01 – 2025-02)');
  });

  it('stays within briefing.max_lines, cutting the least important lines and saying so', () => {
    const set = readDocSet(config, seedProject());
    const small = { ...config, briefing: { ...config.briefing, max_lines: 12 } };
    const lines = generateBriefing(set, small, { now: new Date() });
    expect(lines.length).toBeLessThanOrEqual(12);
    expect(lines.join('\n')).toContain('E001');
    expect(lines.join('\n')).toMatch(/… \d+ more/);
  });
});

describe('writeBriefing', () => {
  const around = '# Project\r\n\r\nHand-written notes, kept as they are.\r\n\r\n## Project Knowledge Briefing\r\n';
  const after = '\r\n## Later section\r\nMore notes with trailing spaces   \r\nno final newline';

  it('rewrites only the lines between the markers, byte for byte elsewhere (CRLF kept)', () => {
    const root = tempDir();
    const file = join(root, 'CLAUDE.md');
    writeFileSync(file, `${around}${BRIEFING_BEGIN}\r\nold line 1\r\nold line 2\r\n${BRIEFING_END}${after}`);
    const result = writeBriefing(root, config, ['new line A', 'new line B', 'new line C']);
    expect(result).toEqual({ file: 'CLAUDE.md', status: 'written', lines: 3 });
    expect(readFileSync(file, 'utf8')).toBe(`${around}${BRIEFING_BEGIN}\r\nnew line A\r\nnew line B\r\nnew line C\r\n${BRIEFING_END}${after}`);
    expect(readBriefing(root, config)).toBe('new line A\nnew line B\nnew line C');
    expect(writeBriefing(root, config, ['new line A', 'new line B', 'new line C']).status).toBe('unchanged');
  });

  it('writes nothing where a person removed the markers or the file', () => {
    const root = tempDir();
    expect(writeBriefing(root, config, ['x']).status).toBe('no-file');
    writeFileSync(join(root, 'CLAUDE.md'), '# Mine\n');
    expect(writeBriefing(root, config, ['x']).status).toBe('no-markers');
    expect(readFileSync(join(root, 'CLAUDE.md'), 'utf8')).toBe('# Mine\n');
  });
});

describe('withBriefingSection', () => {
  it('adds the markers under an existing heading, else appends the section, and is idempotent', () => {
    const existing = '# A\n\n## Project Knowledge Briefing\nold prose\n';
    const added = withBriefingSection(existing, '## Project Knowledge Briefing');
    expect(added).toBe(`# A\n\n## Project Knowledge Briefing\n${BRIEFING_BEGIN}\n${BRIEFING_END}\nold prose\n`);
    expect(withBriefingSection(added, '## Project Knowledge Briefing')).toBe(added);
    expect(withBriefingSection('', '## Project Knowledge Briefing')).toBe(`## Project Knowledge Briefing\n${BRIEFING_BEGIN}\n${BRIEFING_END}\n`);
    expect(withBriefingSection('# A', '## Project Knowledge Briefing')).toBe(`# A\n\n## Project Knowledge Briefing\n${BRIEFING_BEGIN}\n${BRIEFING_END}\n`);
  });
});
