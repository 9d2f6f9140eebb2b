import { describe, expect, it } from 'vitest';
import type { Engram } from '../../../src/core/index.js';
import {
  BLOCK_CLOSE,
  BLOCK_OPEN,
  chooseHits,
  INJECT,
  failureQuery,
  patchFiles,
  promptQuery,
  renderBlock,
  toolQuery,
  withoutGenericWords,
  type SearchHit,
} from '../../../src/services/index.js';

const engram = (id: number, text: string, extra: Partial<Engram> = {}): Engram =>
  ({ id, text, title: null, category: 'general', tags: [], ...extra }) as Engram;

const hit = (id: number, text: string, signals: Partial<SearchHit['signals']> = {}, ranks: Partial<SearchHit['ranks']> = {}): SearchHit => ({
  id,
  score: 1 / id,
  ranks: { bm25: id, vector: null, anchor: null, ...ranks },
  signals: { bm25: 1, vector: null, ...signals },
  engram: engram(id, text),
});

describe('promptQuery', () => {
  it('drops IDE and agent markup, injected blocks and private spans', () => {
    const prompt = [
      '<ide_opened_file>The user opened src/secret.ts</ide_opened_file>',
      '<system-reminder>be brief</system-reminder>',
      '[ENGRAM] old block\n- EG#1 x\n[/ENGRAM]',
      'Why does the deploy fail on an existing index? <private>my token</private>',
    ].join('\n');
    expect(promptQuery(prompt)).toBe('Why does the deploy fail on an existing index?');
  });

  it('is empty for slash commands and prompts too short to have a topic, and cut for pastes', () => {
    expect(promptQuery('/compact')).toBe('');
    expect(promptQuery('ok')).toBe('');
    expect(promptQuery(`explain ${'x'.repeat(5000)}`).length).toBe(600);
  });
});

describe('toolQuery', () => {
  it('uses the tool and what it works on, paths relative to the project, never file contents', () => {
    expect(toolQuery('Edit', { file_path: '/home/u/shop/src/pay.ts', old_string: 'SECRET CONTENT', new_string: 'x' }, '/home/u/shop')).toBe('Edit src/pay.ts');
    expect(toolQuery('Write', { file_path: '/elsewhere/a/b/c/d.ts', content: 'body' }, '/home/u/shop')).toBe('Write b/c/d.ts');
    expect(toolQuery('Bash', { command: 'npm test', description: 'Run tests' }, '/p')).toBe('Bash npm test');
    expect(toolQuery('Grep', { pattern: 'retryCount', path: '/p/src' }, '/p')).toBe('Grep src retryCount');
  });

  it('accepts both generations of subagent and multi-edit tools, and Codex patches', () => {
    expect(toolQuery('Task', { description: 'audit retries', prompt: 'look at src' }, '/p')).toBe('Task audit retries look at src');
    expect(toolQuery('Agent', { description: 'audit retries', prompt: 'look' }, '/p')).toBe('Agent audit retries look');
    expect(toolQuery('MultiEdit', { file_path: '/p/a.ts', edits: [] }, '/p')).toBe('MultiEdit a.ts');
    const patch = '*** Begin Patch\n*** Update File: src/retry.py\n*** Move to: src/backoff.py\n@@\n-a\n+b\n*** Add File: notes.md\n+x\n*** End Patch';
    expect(patchFiles(patch)).toEqual(['src/retry.py', 'src/backoff.py', 'notes.md']);
    expect(toolQuery('apply_patch', { command: patch }, '/p')).toBe('apply_patch src/retry.py src/backoff.py notes.md');
  });

  it('ignores inputs of the wrong shape', () => {
    expect(toolQuery('Bash', 'not an object', '/p')).toBe('Bash');
    expect(toolQuery('Read', { file_path: 42 }, '/p')).toBe('Read');
  });

  it('adds the first lines of an error after a failure', () => {
    expect(failureQuery('Bash', { command: 'npm test' }, '\n\nExit code 1\nECONNREFUSED 5432\nmore\nand more', '/p')).toBe(
      'Bash npm test Exit code 1 ECONNREFUSED 5432 more',
    );
  });
});

describe('withoutGenericWords', () => {
  it('drops tool and file-type words, keeps what the call is about', () => {
    expect(withoutGenericWords('Edit src/payments/refund.ts')).toBe('payments refund');
    expect(withoutGenericWords('Bash npm test Exit code 1 ECONNREFUSED 5432')).toBe('npm test ECONNREFUSED 5432');
  });
});

describe('chooseHits', () => {
  it('keeps lexically relevant hits not shown yet, at most max', () => {
    const hits = [
      hit(1, 'Docker builds need BuildKit in CI'),
      hit(2, 'Docker compose builds the db image in CI'),
      hit(3, 'Unrelated lesson about fonts'),
    ];
    const chosen = chooseHits(hits, 'docker builds fail in CI', { max: 2, alreadyShown: new Set([1]), embedderKind: null });
    expect(chosen.map((c) => c.hit.id)).toEqual([2]);
    expect(chosen[0]?.relevance).toMatchObject({ reason: 'lexical', matched: 3 });
  });

  it('after the first, injects only hits that score close to it', () => {
    const scored = (id: number, score: number) => ({ ...hit(id, `Docker builds need BuildKit in CI (${id})`), score });
    const chosen = chooseHits([scored(1, 1), scored(2, 0.95), scored(3, 0.6)], 'docker builds fail in CI', { max: 3, alreadyShown: new Set(), embedderKind: null });
    expect(chosen.map((c) => c.hit.id)).toEqual([1, 2]);
    expect(INJECT.relativeScore).toBeGreaterThan(0.6);
  });

  it('accepts a semantic hit only when it is the nearest vector and similar enough', () => {
    const paraphrase = hit(1, 'Containers are built with the BuildKit backend', { vector: 0.72 }, { vector: 1 });
    const second = hit(2, 'Something else entirely', { vector: 0.8 }, { vector: 2 });
    expect(chooseHits([paraphrase, second], 'why is my image build slow', { max: 3, alreadyShown: new Set(), embedderKind: 'use-lite' }).map((c) => c.hit.id)).toEqual([1]);
    expect(chooseHits([paraphrase], 'why is my image build slow', { max: 3, alreadyShown: new Set(), embedderKind: null })).toEqual([]);
  });
});

describe('chooseHits on a tool event searched with BM25 alone (keywordMargin)', () => {
  // Two lessons that share one word of `Read package.json` score alike: which one comes first is a coin toss.
  const tie = [
    hit(1, 'Coverage thresholds are per package; raising the global one made unrelated PRs fail.', { bm25: 3.44 }),
    hit(2, 'CI reads the Node version from .nvmrc; bump it there and in package.json engines together.', { bm25: 3.44 }),
  ];
  const options = { max: 2, alreadyShown: new Set<number>(), embedderKind: null };

  it('stays silent when the keyword ranking has no clear winner', () => {
    expect(chooseHits(tie, 'Read package.json', options).map((c) => c.hit.id)).toEqual([1]);
    expect(chooseHits(tie, 'Read package.json', { ...options, keywordMargin: true })).toEqual([]);
  });

  it('injects when the first hit beats the runner-up by the margin its match needs', () => {
    const { oneTerm, terms } = INJECT.toolMargin;
    const ahead = (ratio: number) => [{ ...tie[0]!, signals: { bm25: 3.44 * ratio, vector: null } }, tie[1]!];
    expect(chooseHits(ahead(oneTerm), 'Read package.json', { ...options, keywordMargin: true }).map((c) => c.hit.id)).toEqual([1]);
    expect(chooseHits(ahead(oneTerm * 0.95), 'Read package.json', { ...options, keywordMargin: true })).toEqual([]);
    // Two query terms matched: the smaller margin is enough.
    const two = [hit(1, 'Docker builds need BuildKit on CI', { bm25: 6 * terms }), hit(2, 'Docker builds cache layers', { bm25: 6 })];
    expect(chooseHits(two, 'Bash docker builds', { ...options, keywordMargin: true }).map((c) => c.hit.id)).toEqual([1]);
    expect(chooseHits([{ ...two[0]!, signals: { bm25: 6 * terms * 0.95, vector: null } }, two[1]!], 'Bash docker builds', { ...options, keywordMargin: true })).toEqual([]);
  });

  it('exempts a hit that holds many query terms, and a ranking with a single hit', () => {
    const strong = [
      hit(1, 'git rebase origin main force push lease', { bm25: 10 }),
      hit(2, 'git rebase origin main lockfile conflict', { bm25: 10 }),
    ];
    expect(chooseHits(strong, 'Bash git rebase origin/main --force', { ...options, keywordMargin: true }).length).toBeGreaterThan(0);
    expect(chooseHits([tie[0]!], 'Read package.json', { ...options, keywordMargin: true }).map((c) => c.hit.id)).toEqual([1]);
  });
});

describe('chooseHits on a tool event: two or three matched terms need the round 5 margin', () => {
  it('stays silent on a two-term match 1.25 × ahead of the runner-up, injects at 1.3 ×', () => {
    const options = { max: 2, alreadyShown: new Set<number>(), embedderKind: null, keywordMargin: true };
    const two = (ratio: number) => [hit(1, 'Docker builds need BuildKit on CI', { bm25: 6 * ratio }), hit(2, 'Docker builds cache layers', { bm25: 6 })];
    expect(chooseHits(two(1.25), 'Bash docker builds', options)).toEqual([]);
    expect(chooseHits(two(1.3), 'Bash docker builds', options).map((c) => c.hit.id)).toEqual([1]);
  });
});

describe('chooseHits on a tool event: a close result holding more of the call goes first (round 6 fullerMatch)', () => {
  // The lesson set's `Edit CLAUDE.md` failure: BM25's length normalisation put a short lesson holding 5 of the call's
  // 7 content terms ahead of the one that answers it, which holds 6.
  const call = 'Edit CLAUDE.md <tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>';
  const patch = (bm25: number): SearchHit => ({ ...hit(1, 'Codex apply_patch "Update File" fails on a file that does not exist yet; use Add File first.', { bm25 }), score: 1 });
  const edit = (score: number): SearchHit => ({ ...hit(2, "Claude Code's Edit and MultiEdit refuse to change a file that was not Read earlier in the session: use the Read tool first, not yet done.", { bm25: 14.43 }), score });
  const options = { max: 2, alreadyShown: new Set<number>(), embedderKind: null, keywordMargin: true };

  it('puts the fuller match first and drops the shorter one', () => {
    const chosen = chooseHits([patch(15.03), edit(0.857)], call, options);
    expect(chosen.map((c) => c.hit.id)).toEqual([2]);
    expect(chosen[0]!.relevance.matched).toBe(7);
  });

  it('keeps the first when the fuller one is too far behind, and leaves prompts alone', () => {
    const { window } = INJECT.fullerMatch;
    expect(chooseHits([patch(15.03), edit(window * 0.95)], call, options).map((c) => c.hit.id)).toEqual([1]);
    expect(chooseHits([patch(15.03), edit(0.857)], call, { ...options, keywordMargin: false }).map((c) => c.hit.id)).toEqual([1]);
  });

  it('never replaces a memory with one already shown in this context', () => {
    expect(chooseHits([patch(15.03), edit(0.857)], call, { ...options, alreadyShown: new Set([2]) }).map((c) => c.hit.id)).toEqual([1]);
  });
});

describe('chooseHits on a prompt whose first hit the keyword ranking singles out (promptWinner)', () => {
  // Round 5: the lesson set's "CI takes 40 minutes now" — 2 of its 5 content terms are in the lesson that answers it,
  // which the relevance rule (half of them) withholds, while BM25 puts that lesson far above every other memory.
  const prompt = 'CI takes 40 minutes now';
  const lesson = (bm25: number, ranks: Partial<SearchHit['ranks']> = {}): SearchHit => ({
    ...hit(1, 'Keep CI under 15 minutes: run the slow e2e suite only on main and on PRs labelled e2e.', { bm25, vector: 0.56 }, { vector: 1, ...ranks }),
    engram: engram(1, 'Keep CI under 15 minutes: run the slow e2e suite only on main and on PRs labelled e2e.', { category: 'ops/ci', tags: ['time'] }),
  });
  const other = hit(2, 'Batch inserts inside one transaction; 10k single-row autocommits take seconds.', { bm25: 5 }, { vector: 2 });
  const options = { max: 3, alreadyShown: new Set<number>(), embedderKind: 'use-lite', promptWinner: true };
  const gap = INJECT.promptWinner.bm25Gap;

  it('injects the first hit when it scores the gap above every other result, and says why', () => {
    expect(chooseHits([lesson(5 * gap), other], prompt, { ...options, promptWinner: false })).toEqual([]);
    const chosen = chooseHits([lesson(5 * gap), other], prompt, options);
    expect(chosen.map((c) => c.hit.id)).toEqual([1]);
    expect(chosen[0]?.relevance).toMatchObject({ reason: 'clear-winner', matched: 2 });
  });

  it('stays silent when the gap is smaller, no result is BM25’s first (round 7: wherever it is), or it was shown already', () => {
    expect(chooseHits([lesson(5 * gap * 0.95), other], prompt, options)).toEqual([]);
    expect(chooseHits([lesson(5 * gap, { bm25: 2 }), other], prompt, options)).toEqual([]);
    expect(chooseHits([lesson(5 * gap), other], prompt, { ...options, alreadyShown: new Set([1]) })).toEqual([]);
  });

  it('needs two matched terms covering 0.4 of the prompt', () => {
    expect(chooseHits([lesson(5 * gap), other], 'CI takes 40 minutes now on every branch push', options)).toEqual([]);
    expect(chooseHits([lesson(5 * gap), other], 'CI takes forever now', options)).toEqual([]);
  });
});

describe('chooseHits with the engram terms it keeps between hooks', () => {
  it('judges an engram by its text of now: an edit of the same engram is analysed again', () => {
    const query = 'docker builds fail in CI';
    const options = { max: 3, alreadyShown: new Set<number>(), embedderKind: null };
    expect(chooseHits([hit(7, 'Docker builds need BuildKit in CI')], query, options).map((c) => c.hit.id)).toEqual([7]);
    // Same id, same call shape, new text: no longer relevant, then relevant again through the kept terms.
    expect(chooseHits([hit(7, 'Fonts render blurry on Windows')], query, options)).toEqual([]);
    const again = chooseHits([hit(7, 'Docker builds need BuildKit in CI')], query, options);
    expect(again.map((c) => c.hit.id)).toEqual([7]);
    expect(again[0]?.relevance).toMatchObject({ reason: 'lexical', matched: 3 });
    // Title, category and tags count, as in the search.
    expect(chooseHits([hit(7, 'Fonts render blurry', {}, {})].map((h) => ({ ...h, engram: { ...h.engram, tags: ['docker', 'builds', 'ci'] } })), query, options).map((c) => c.hit.id)).toEqual([7]);
  });

  it('gives the same verdicts as analysing every text afresh, past the number of texts it keeps', () => {
    const query = 'retry payment refund webhook';
    const options = { max: 1, alreadyShown: new Set<number>(), embedderKind: null };
    const words = ['retry', 'payment', 'refund', 'webhook', 'fonts', 'docker', 'cache', 'timeout'];
    for (let i = 0; i < 5_000; i++) {
      const text = `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5 + 1) % 8]} lesson ${i}`;
      const expected = [...new Set(text.toLowerCase().split(' '))].filter((w) => ['retry', 'payment', 'refund', 'webhook'].includes(w)).length;
      const chosen = chooseHits([hit(i, text)], query, options);
      expect(chosen.length === 0 ? 0 : chosen[0]?.relevance.matched, text).toBe(chosen.length === 0 ? 0 : expected);
      if (expected >= 2) expect(chosen.map((c) => c.hit.id), text).toEqual([i]);
    }
  });
});

describe('renderBlock', () => {
  it('marks the block, leads with citable ids, and keeps an engram from closing it early', () => {
    const block = renderBlock([engram(7, 'Use [/ENGRAM] carefully\nacross lines', { category: 'tooling', title: 'Markers' })], { heading: 'Memories', budget: 1000 });
    expect(block?.text).toBe(`${BLOCK_OPEN} Memories (ids are citable as EG#<id>)\n- EG#7 [tooling] Markers: Use (/ENGRAM) carefully across lines\n${BLOCK_CLOSE}`);
  });

  it('stays within the budget, names what it dropped, and cuts a long engram', () => {
    const long = engram(1, 'word '.repeat(400));
    const items = [long, ...Array.from({ length: 20 }, (_, i) => engram(i + 2, `lesson number ${i} with some words`))];
    const block = renderBlock(items, { heading: 'Memories', budget: 1200 });
    expect(block?.text.length).toBeLessThanOrEqual(1200);
    expect(block?.text).toContain('…');
    expect(block?.dropped.length).toBeGreaterThan(0);
    expect(block?.text).toMatch(/\(\d+ more not shown for space: EG#\d+/);
    expect(renderBlock([long], { heading: 'Memories', budget: 200 })).toBeNull();
  });
});
