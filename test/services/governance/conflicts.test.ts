/**
 * Conflict detection: the rules on the issue's examples and on the labelled pairs in fixtures/conflicts (the quality
 * bar: precision ≥ 0.8 and recall ≥ 0.7, bench/conflicts.mjs prints the numbers), and the LLM path against a fake
 * OpenAI-compatible server on 127.0.0.1: its verdict replaces the rules' for the pairs it is asked about.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient } from '../../../src/core/index.js';
import { addEngram, compareTexts, findConflicts, llmVerdicts } from '../../../src/services/index.js';
import { completion, fakeOpenAi, llmSettings } from '../../core/llm/_fakes.js';
import { ROOT, tempStore } from '../../_helpers.js';

describe('rules', () => {
  it("find the issue's examples and leave restatements and unrelated lessons alone", () => {
    expect(compareTexts('Use pnpm.', 'Never use pnpm.')).toMatchObject({ conflict: true, signal: 'polarity' });
    expect(compareTexts('The timeout is 30s.', 'The timeout is 60s.')).toMatchObject({ conflict: false }); // one shared word is no subject
    expect(compareTexts('The request timeout is 30s.', 'The request timeout is 60 seconds.')).toMatchObject({ conflict: true, signal: 'value' });
    expect(compareTexts('The request timeout is 30s.', 'Requests time out after the request timeout of 30 seconds.')).toMatchObject({ conflict: false });
    expect(compareTexts('Indent with tabs in Go files.', 'Indent with spaces in Go files.')).toMatchObject({ conflict: true, signal: 'antonym' });
    expect(compareTexts('Use pnpm, not npm.', 'Prefer pnpm over npm here.')).toMatchObject({ conflict: false });
    expect(compareTexts('Never commit .env files.', 'Commit the package-lock.json file.')).toMatchObject({ conflict: false });
    expect(compareTexts('lesson 2', 'lesson 3')).toMatchObject({ conflict: false });
  });

  it('reach precision ≥ 0.8 and recall ≥ 0.7 on the labelled pairs, held-out set included', () => {
    const folder = join(ROOT, 'fixtures', 'conflicts');
    for (const name of ['dev.jsonl', 'holdout.jsonl']) {
      const pairs = readFileSync(join(folder, name), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { a: string; b: string; label: string });
      expect(pairs.length).toBeGreaterThanOrEqual(45);
      let tp = 0;
      let fp = 0;
      let fn = 0;
      for (const pair of pairs) {
        const yes = compareTexts(pair.a, pair.b).conflict;
        if (yes && pair.label === 'conflict') tp++;
        else if (yes) fp++;
        else if (pair.label === 'conflict') fn++;
      }
      expect(tp / (tp + fp), `${name} precision`).toBeGreaterThanOrEqual(0.8);
      expect(tp / (tp + fn), `${name} recall`).toBeGreaterThanOrEqual(0.7);
    }
  });

  it('compare a new engram with the active engrams it would be shown beside: same project or personal', () => {
    const store = tempStore();
    const shop = addEngram(store, { text: 'Use pnpm to install dependencies.', project: 'shop' }).engram;
    addEngram(store, { text: 'Use pnpm to install dependencies.', project: 'blog' });
    const personal = addEngram(store, { text: 'Prefer pnpm for installs in every project.' }).engram;
    const found = findConflicts(store, { text: 'Never use pnpm to install dependencies; use npm.', project: 'shop' });
    expect(found.map((conflict) => conflict.other_id).sort()).toEqual([shop.id, personal.id].sort());
  });
});

describe('with an LLM configured', () => {
  it('asks about the closest pairs and its verdict replaces the rules: a conflict the words miss, a false alarm cleared', async () => {
    const store = tempStore();
    const tabs = addEngram(store, { text: 'Add new translations to locales/en.json first.' }).engram;
    const prod = addEngram(store, { text: 'Use pnpm to install dependencies in this repository.' }).engram;
    const server = await fakeOpenAi((request) => {
      const prompt = String(request.body.messages.at(-1).content);
      if (prompt.includes('locales/en.json')) return completion('{"relation": "conflict", "why": "one says to edit en.json, the other that it is generated"}');
      return completion('```json\n{"relation": "compatible", "why": "both say to use pnpm"}\n```');
    });
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge' }), { store, retryBaseMs: 1 });

    const text = 'Never edit locales/en.json by hand; new translations come from the translation platform export.';
    expect(findConflicts(store, { text, project: null })).toEqual([]); // the rules miss it
    const verdicts = await llmVerdicts(store, { text, project: null }, llm);
    expect(verdicts.get(tabs.id)).toMatchObject({ conflict: true, method: 'llm', signal: 'llm' });
    const added = addEngram(store, { text }, { actor: { by: 'agent', via: 'mcp' }, verdicts });
    expect(added.engram.status).toBe('pending');
    expect(added.conflicts).toEqual([expect.objectContaining({ other_id: tabs.id, method: 'llm', reason: 'one says to edit en.json, the other that it is generated' })]);

    const rulesSay = 'Never use pnpm in this repository; install dependencies with npm.';
    expect(findConflicts(store, { text: rulesSay, project: null }).map((c) => c.other_id)).toEqual([prod.id]);
    const cleared = await llmVerdicts(store, { text: rulesSay, project: null }, llm);
    expect(findConflicts(store, { text: rulesSay, project: null }, cleared)).toEqual([]);
    const asked = server.requests.map((request) => request.body.messages[0].content as string);
    expect(asked.every((system) => system.includes('"relation": "conflict" | "duplicate" | "compatible"'))).toBe(true);
    expect(server.requests.every((request) => request.body.response_format?.type === 'json_object')).toBe(true);
  });

  it('a model that is down or answers nonsense leaves the pair to the rules', async () => {
    const store = tempStore();
    const old = addEngram(store, { text: 'The API client timeout is 30s.' }).engram;
    const server = await fakeOpenAi([completion('I think they might conflict?'), { status: 500, body: { error: 'down' } }]);
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge', max_retries: 0 }), { store, retryBaseMs: 1 });
    const text = 'The API client timeout is 60 seconds.';
    const verdicts = await llmVerdicts(store, { text, project: null }, llm);
    expect(verdicts.size).toBe(0);
    expect(findConflicts(store, { text, project: null }, verdicts).map((c) => [c.other_id, c.method])).toEqual([[old.id, 'rules']]);
  });
});
