import { describe, expect, it } from 'vitest';
import { authoritativeStatus, compactTimeline, correctionBlock, appendBlock, moveToGraveyard } from '../../../src/services/knowledge/graveyard.js';
import { lintDocs } from '../../../src/services/knowledge/lint.js';
import { parseDoc } from '../../../src/services/knowledge/parse.js';

const registry = `# Concept Registry

## C012: proximity_pruning (DEAD)
- **Code:** \`pruning/proximity.py\`
- **Lesson:** too aggressive

## C023: structure_pruning (ACTIVE)
- **Code:** \`pruning/structure.py\`
`;
const graveyard = '# Concept Graveyard\n\nAppend-only.\n';

describe('moveToGraveyard', () => {
  it('appends the full entry to the graveyard and leaves a one-line stub with its arrow', () => {
    const result = moveToGraveyard(parseDoc('concepts', 'concept_registry.md', registry), parseDoc('conceptGraveyard', 'concept_graveyard.md', graveyard), 'C012', 'docs/concept_graveyard.md');
    expect(result.living).toBe(`# Concept Registry

## C012: proximity_pruning (DEAD) → concept_graveyard.md#C012

## C023: structure_pruning (ACTIVE)
- **Code:** \`pruning/structure.py\`
`);
    expect(result.graveyard).toBe(`${graveyard}\n## C012: proximity_pruning (DEAD)\n- **Code:** \`pruning/proximity.py\`\n- **Lesson:** too aggressive\n`);
    const docs = { concepts: parseDoc('concepts', 'concept_registry.md', result.living), conceptGraveyard: parseDoc('conceptGraveyard', 'concept_graveyard.md', result.graveyard) };
    expect(lintDocs({ docs, maxEntryLines: 25, graveyardBaseline: { conceptGraveyard: graveyard } })).toEqual([]);
  });
});

describe('authoritativeStatus', () => {
  it('takes the latest block for each id: a correction overrides the entry above it', () => {
    let text = `${graveyard}\n## C012: proximity_pruning (DEAD)\n- **Lesson:** x\n\n## C013: other (DEAD)\n`;
    text = appendBlock(text, correctionBlock('C012', '2026-02-20', 'DEAD → EVOLVED → C089', 'Original DEAD entry above is superseded.'));
    const doc = parseDoc('conceptGraveyard', 'g.md', text);
    expect(authoritativeStatus(doc)).toEqual(new Map([['C012', 'EVOLVED'], ['C013', 'DEAD']]));
    expect(text).toContain('## C012 CORRECTION (2026-02-20)\nReclassified: DEAD → EVOLVED → C089\nOriginal DEAD entry above is superseded.\n');
  });
});

describe('compactTimeline', () => {
  const timeline = `# Timeline

## Phase: Early (2024-Q4)

Built LegDetector (C001). First backtest looked good (E001).

Later found the same-bar bug; see E007 and W002.

## Phase: Now (2026-10 – present)

Current work on C042.

More detail here.
`;
  it('collapses phases that ended before the cutoff to one paragraph and keeps every id they mentioned', () => {
    const result = compactTimeline(parseDoc('timeline', 't.md', timeline), '2026-05-01');
    expect(result.compacted).toEqual(['Phase: Early']);
    expect(result.text).toBe(`# Timeline

## Phase: Early (2024-Q4)

Built LegDetector (C001). First backtest looked good (E001).

IDs: C001, E001, E007, W002

## Phase: Now (2026-10 – present)

Current work on C042.

More detail here.
`);
    expect(compactTimeline(parseDoc('timeline', 't.md', result.text), '2026-05-01').compacted).toEqual([]);
  });
});
