#!/usr/bin/env node
// A scripted fold agent for tests: reads the fold prompt on stdin like `claude -p`, finds the chunk input file and
// its reserved ids, and edits the docs as the plan says for this invocation (good edit, schema break, fix, truncation,
// hang, crash mid-edit, oversized edit). Usage: node _fold-agent.mjs <plan.json>; every call is logged to
// <plan.json>.log (one JSON line: attempt, action, prompt, cwd).
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const planFile = process.argv[2];
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const counterFile = `${planFile}.count`;
const attempt = existsSync(counterFile) ? Number(readFileSync(counterFile, 'utf8')) : 0;
writeFileSync(counterFile, String(attempt + 1));
const step = plan.steps[Math.min(attempt, plan.steps.length - 1)];
const prompt = readFileSync(0, 'utf8');
const src = existsSync('src') ? readdirSync('src').sort() : [];
appendFileSync(`${planFile}.log`, `${JSON.stringify({ attempt, action: step.do, prompt, cwd: process.cwd(), src, child: process.env.ENGRAM_LLM_CHILD ?? null })}\n`);

const input = /(\S+_input\.md)/.exec(prompt)?.[1];
const chunk = input ? readFileSync(join(process.cwd(), input), 'utf8') : '';
const reserved = [...chunk.matchAll(/^- ([CEW]\d{3,}): \(/gm)].map((m) => m[1]);
const first = (prefix) => reserved.find((id) => id.startsWith(prefix));
const docs = plan.docs ?? 'docs/decisions';
const file = (name) => join(process.cwd(), docs, name);
const append = (name, text) => writeFileSync(file(name), `${readFileSync(file(name), 'utf8').replace(/\s+$/, '')}\n\n${text}\n`);
const today = new Date().toISOString().slice(0, 10);
const concept = (code) => `## ${first('C')}: ${step.name ?? 'retry_helper'} (ACTIVE)\n${code ? `- **Code:** \`${step.code ?? 'src/retry.ts'}\`\n` : ''}- **Issues:** none`;
const sleepForever = () => setInterval(() => {}, 1 << 30);

switch (step.do) {
  case 'good':
    append('concept_registry.md', concept(true));
    if (first('E')) append('epistemic_state.md', `## ${first('E')}: retries hide flaky calls (unverified)\n**Evidence:**\n- chunk says so\n**Related concepts:** ${first('C')}`);
    append('timeline.md', `## Phase: ${step.phase ?? 'Retry work'} (${today})\n\nAdded ${first('C')}.`);
    console.log('done');
    break;
  case 'break':
    append('concept_registry.md', concept(false));
    console.log('done');
    break;
  case 'fix': {
    const text = readFileSync(file('concept_registry.md'), 'utf8');
    writeFileSync(file('concept_registry.md'), text.replace(/(## C\d+: [^\n]*\(ACTIVE\)\n)(?!- \*\*Code)/, `$1- **Code:** \`${step.code ?? 'src/retry.ts'}\`\n`));
    console.log('fixed');
    break;
  }
  case 'truncate':
    writeFileSync(file('concept_registry.md'), '# Concept Registry\n');
    console.log('done');
    break;
  case 'restore': {
    // What a real agent does with the correction file: restore what it removed from the snapshot it names.
    const dir = /are in `([^`]+)`/.exec(readFileSync(join(process.cwd(), /Read (\S+retry_\d+\.md)/.exec(prompt)[1]), 'utf8'))[1];
    writeFileSync(file('concept_registry.md'), readFileSync(join(process.cwd(), dir, 'concepts.md'), 'utf8'));
    append('concept_registry.md', concept(true));
    console.log('restored');
    break;
  }
  case 'huge':
    append('concept_registry.md', `${concept(true)}\n${Array.from({ length: 20 }, (_, i) => `- note ${i}: ${'x'.repeat(400)}`).join('\n')}`.replace(/(- note 0)/, '$1'));
    console.log('done');
    break;
  case 'crash':
    append('concept_registry.md', concept(true));
    if (step.marker) writeFileSync(step.marker, String(process.pid));
    sleepForever();
    break;
  case 'hang':
    if (step.marker) writeFileSync(step.marker, String(process.pid));
    sleepForever();
    break;
  case 'fail':
    console.error('not logged in');
    process.exit(1);
    break;
  default:
    console.log('nothing to do');
}
