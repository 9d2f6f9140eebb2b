/**
 * The schema linter against fixtures/knowledge: the seed's own examples (fixtures/knowledge/seed, made consistent by
 * adding the entries they reference) lint clean, and each folder of fixtures/knowledge/lint overlays the seed set with
 * one broken (or, for valid-*, one tricky but correct) document and lists exactly the violations expected. A rule
 * without a fixture, or a fixture folder the table does not know, fails the suite.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KnowledgeConfigSchema } from '../../../src/services/knowledge/config.js';
import { definedIds, lintDocSet, livingIds, readDocSet } from '../../../src/services/knowledge/docset.js';
import { LINT_RULES, lineDiffChars, type LintRule } from '../../../src/services/knowledge/lint.js';
import { ROOT, tempDir } from '../../_helpers.js';

const FIXTURES = join(ROOT, 'fixtures', 'knowledge');
const SEED = join(FIXTURES, 'seed');
const config = KnowledgeConfigSchema.parse({});

interface Expectation {
  violations: Array<{ rule: LintRule; file: string; line: number }>;
  baseline?: boolean;
  missing?: string[];
  chunk?: { reserved: string[]; diffChars?: number; expectedGrowth?: number };
}

/** A repository folder holding the seed docs at the default paths, overlaid with a fixture's files. */
function projectWith(overlay: string | null, missing: string[] = []): string {
  const root = tempDir('engram-lint-');
  const dir = join(root, 'docs', 'decisions');
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(SEED)) copyFileSync(join(SEED, name), join(dir, name));
  if (overlay) for (const name of readdirSync(overlay)) if (name.endsWith('.md')) copyFileSync(join(overlay, name), join(dir, name));
  for (const name of missing) rmSync(join(dir, name));
  return root;
}

const seedSet = () => readDocSet(config, projectWith(null));

describe('lintDocs', () => {
  it('finds nothing wrong with the seed examples', () => {
    const set = seedSet();
    expect(set.problems).toEqual([]);
    expect(lintDocSet(set, config)).toEqual([]);
    expect(definedIds(set).size).toBe(13);
  });

  const cases = readdirSync(join(FIXTURES, 'lint')).sort();
  const covered = new Set<string>();
  for (const name of cases) {
    const folder = join(FIXTURES, 'lint', name);
    const expectation = JSON.parse(readFileSync(join(folder, 'expect.json'), 'utf8')) as Expectation;
    for (const violation of expectation.violations) covered.add(violation.rule);
    it(`${name}: reports ${expectation.violations.map((v) => `${v.rule} at ${v.file}:${v.line}`).join(', ') || 'nothing'}`, () => {
      const before = seedSet();
      const set = readDocSet(config, projectWith(folder, expectation.missing));
      const chunk = expectation.chunk && {
        reserved: new Set(expectation.chunk.reserved),
        knownBefore: new Set(definedIds(before).keys()),
        livingBefore: livingIds(before),
        ...(expectation.chunk.diffChars !== undefined ? { diffChars: expectation.chunk.diffChars, expectedGrowth: expectation.chunk.expectedGrowth! } : {}),
      };
      const graveyardBaseline = expectation.baseline
        ? { conceptGraveyard: before.texts.conceptGraveyard!, epistemicGraveyard: before.texts.epistemicGraveyard! }
        : undefined;
      const violations = lintDocSet(set, config, { ...(graveyardBaseline ? { graveyardBaseline } : {}), ...(chunk ? { chunk } : {}) });
      expect(violations.map((v) => ({ rule: v.rule, file: v.file.replace(/^docs\/decisions\//, ''), line: v.line }))).toEqual(expectation.violations);
      for (const violation of violations) {
        expect(violation.hint).toBe(LINT_RULES[violation.rule]);
        expect(violation.message.length).toBeGreaterThan(5);
      }
    });
  }

  it('has a fixture for every rule', () => {
    expect(Object.keys(LINT_RULES).filter((rule) => !covered.has(rule))).toEqual([]);
  });

  it('holds a dispatch for a person only for the diff-size guard', () => {
    const set = seedSet();
    const violations = lintDocSet(set, config, {
      chunk: { reserved: new Set(), knownBefore: new Set(definedIds(set).keys()), livingBefore: livingIds(set), diffChars: 11, expectedGrowth: 5 },
    });
    expect(violations.map((v) => [v.rule, v.severity])).toEqual([['diff-size', 'hold']]);
  });
});

describe('lineDiffChars', () => {
  it('counts added and removed lines, not moved ones', () => {
    expect(lineDiffChars('a\nb\nc', 'c\nb\na')).toBe(0);
    expect(lineDiffChars('a\nb', 'a\nb\nnew line')).toBe('new line'.length + 1);
    expect(lineDiffChars('a\nbb', 'a')).toBe(3);
  });
});

it('reads fixtures from the repository', () => expect(existsSync(SEED)).toBe(true));
