// Inputs for bench/hooks.mjs: a store of realistic engrams, a project folder, and hook payloads shaped like
// Claude Code 2.1's (see ../shared/fixtures/hook-payloads), varied from run to run. Deterministic: the same seed
// gives the same corpus and the same calls.
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

let seed = 42;
/** Deterministic pseudo-random numbers in [0, 1). */
export function random() {
  seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
  return ((seed >>> 0) % 1_000_000) / 1_000_000;
}
const pick = (items) => items[Math.floor(random() * items.length)];

/** The project the hooks run in; engrams of this project are what SessionStart shows besides pinned ones. */
export const PROJECT = 'payments-api';
const OTHER_PROJECTS = ['web-frontend', 'infra', 'billing-service', 'mobile-app', 'data-pipeline'];

const AREAS = [
  'checkout', 'billing', 'auth', 'search', 'notifications', 'reports', 'admin', 'onboarding', 'payments', 'exports',
  'webhooks', 'sync', 'invoices', 'refunds', 'ledger', 'accounts', 'sessions', 'uploads', 'audit', 'scheduler',
];
const STEMS = [
  'build', 'test', 'deploy', 'cache', 'docker', 'index', 'migration', 'schema', 'query', 'timeout', 'retry', 'lint',
  'config', 'secret', 'token', 'session', 'cookie', 'header', 'request', 'response', 'handler', 'route', 'server',
  'client', 'worker', 'queue', 'job', 'cron', 'log', 'metric', 'trace', 'alert', 'socket', 'proxy', 'tls', 'dns',
  'image', 'volume', 'env', 'flag', 'rollout', 'fixture', 'mock', 'snapshot', 'flaky', 'shard', 'coverage', 'module',
  'bundle', 'lockfile', 'release', 'rebase', 'merge', 'branch', 'commit', 'review', 'webpack', 'vite', 'esbuild',
];
const CLAUSES = [
  (a, b, c) => `Seen in src/${a}/${b}.ts.`,
  (a, b, c) => `This came up during the ${a} ${b} work.`,
  (a, b, c) => `Applies to the ${a} service and its ${b} ${c} too.`,
  (a, b, c) => `Noted while fixing a ${b} bug in ${a}.`,
  (a, b, c) => `Also true for the ${a} ${c} job in CI.`,
  (a, b, c) => `The ${a} team hit this twice around ${b} and ${c}.`,
  (a, b, c) => `Check test/${a}/${b}.test.ts when it comes back.`,
  (a, b, c) => `Relevant whenever ${a} touches ${b} or ${c}.`,
];

/** The hand-written lessons of fixtures/eval, without their eval-only keys. */
export function lessons(root) {
  return readFileSync(join(root, 'fixtures', 'eval', 'memories.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const { text, category, tags } = JSON.parse(line);
      return { text, category, tags };
    });
}

/** Labelled questions of fixtures/eval, as people ask them: the prompts UserPromptSubmit sees. */
export function questions(root) {
  return ['queries-dev.jsonl', 'queries-test.jsonl'].flatMap((file) =>
    readFileSync(join(root, 'fixtures', 'eval', file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line).q),
  );
}

/**
 * `count` import lines: each of the eval lessons in turn, plus a clause naming where it applies, so no two are the
 * same text. About 12 % belong to {@link PROJECT}, 25 % to other projects, the rest are personal; one in 800 is pinned.
 */
export function corpusLines(root, count) {
  const base = lessons(root);
  const seen = new Set();
  const lines = [];
  for (let i = 0; i < count; i++) {
    const lesson = base[i % base.length];
    let text;
    do {
      text = `${lesson.text} ${pick(CLAUSES)(pick(AREAS), pick(STEMS), pick(STEMS))}`;
      if (seen.has(text)) text = `${text} ${pick(CLAUSES)(pick(AREAS), pick(STEMS), pick(STEMS))}`;
    } while (seen.has(text));
    seen.add(text);
    const r = random();
    const project = r < 0.12 ? PROJECT : r < 0.37 ? pick(OTHER_PROJECTS) : undefined;
    const line = { text, category: lesson.category, tags: [...(lesson.tags ?? []), pick(AREAS)] };
    if (project) line.project = project;
    if (!project && i % 800 === 7) line.pinned = true;
    lines.push(JSON.stringify(line));
  }
  return lines;
}

/** A small Node project under git, as an agent would work in; `dir`'s folder name is the project name. */
export function makeProject(dir) {
  mkdirSync(join(dir, 'src', 'payments'), { recursive: true });
  mkdirSync(join(dir, 'test'), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: PROJECT,
        version: '1.4.0',
        private: true,
        type: 'module',
        scripts: { build: 'tsc -p .', test: 'vitest run', lint: 'eslint .' },
        dependencies: { express: '^4.19.0', pg: '^8.11.0', zod: '^3.23.0' },
        devDependencies: { typescript: '^5.4.0', vitest: '^1.6.0', eslint: '^9.0.0' },
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": true, "module": "nodenext" } }\n');
  writeFileSync(join(dir, 'src', 'retry.ts'), 'export const retry = async <T>(fn: () => Promise<T>) => fn();\n');
  writeFileSync(join(dir, 'src', 'payments', 'charge.ts'), 'export function charge() {}\n');
  writeFileSync(join(dir, 'test', 'retry.test.ts'), "import { test } from 'vitest';\ntest('retry', () => {});\n");
  const git = (...args) =>
    spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-c', 'init.defaultBranch=main', ...args], {
      cwd: dir,
      stdio: 'ignore',
    });
  const ok = git('init', '-q').status === 0;
  if (ok) {
    git('remote', 'add', 'origin', `git@github.com:acme/${PROJECT}.git`);
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
  } else {
    // No git on this machine: a .git folder is what makes the folder a repository for Engram.
    mkdirSync(join(dir, '.git'), { recursive: true });
    writeFileSync(join(dir, '.git', 'config'), `[remote "origin"]\n\turl = git@github.com:acme/${PROJECT}.git\n`);
  }
  return ok;
}

const common = (cwd, home, event) => {
  const session = randomUUID();
  return {
    session_id: session,
    transcript_path: join(home, '.claude', 'projects', `-${cwd.replaceAll('/', '-').slice(1)}`, `${session}.jsonl`),
    cwd,
    hook_event_name: event,
  };
};

const COMMANDS = [
  (a, s) => `npm test -- test/${a}.test.ts`,
  (a, s) => `npx vitest run --reporter=dot ${s}`,
  (a, s) => 'git rebase origin/main',
  (a, s) => `git push --force-with-lease origin feature/${a}-${s}`,
  (a, s) => 'npm run build && npm test',
  (a, s) => `docker compose up -d ${a}`,
  (a, s) => `psql "$DATABASE_URL" -c 'select count(*) from ${a}'`,
  (a, s) => `grep -rn "${s}" src/${a}`,
  (a, s) => 'npm ci',
  (a, s) => `git log --oneline -5 -- src/${a}`,
];

/** A PreToolUse call: a different tool and target each time. */
export function preToolUse(cwd, home, n) {
  const area = pick(AREAS);
  const stem = pick(STEMS);
  const file = `${cwd}/src/${area}/${stem}.ts`;
  const tools = [
    () => ['Read', { file_path: file }],
    () => ['Edit', { file_path: file, old_string: `const ${stem} = 1;`, new_string: `const ${stem} = 2;`, replace_all: false }],
    () => ['Write', { file_path: `${cwd}/test/${area}.${stem}.test.ts`, content: `import { test } from 'vitest';\ntest('${stem}', () => {});\n` }],
    () => ['Bash', { command: pick(COMMANDS)(area, stem), description: `Run ${stem} check for ${area}` }],
    () => ['Grep', { pattern: `${stem}\\(`, path: `${cwd}/src/${area}`, output_mode: 'content' }],
    () => ['Glob', { pattern: `src/**/*${stem}*.ts` }],
  ];
  const [tool_name, tool_input] = tools[((n % tools.length) + tools.length) % tools.length]();
  return {
    ...common(cwd, home, 'PreToolUse'),
    prompt_id: randomUUID(),
    permission_mode: 'default',
    effort: { level: 'high' },
    tool_name,
    tool_input,
    tool_use_id: `toolu_${String(n).padStart(6, '0')}`,
  };
}

const LEADS = ['', 'Quick question: ', 'Before I open the PR, ', 'Hmm, ', 'In this repo, ', 'One more thing: '];
const TAILS = [
  () => '',
  () => ' Check src/retry.ts first.',
  () => ` I'm in the ${pick(AREAS)} code.`,
  () => ' Keep it short.',
  () => ' Then run the tests.',
  () => ' See test/retry.test.ts.',
];

/** UserPromptSubmit prompts: the eval questions with varied openings and endings; never the same text twice. */
export function promptSource(root) {
  const pool = questions(root);
  const used = new Set();
  let next = 0;
  return () => {
    for (;;) {
      const q = pool[next++ % pool.length];
      const prompt = `${pick(LEADS)}${q}${pick(TAILS)()}`;
      if (!used.has(prompt)) {
        used.add(prompt);
        return prompt;
      }
    }
  };
}

export function userPromptSubmit(cwd, home, prompt) {
  return { ...common(cwd, home, 'UserPromptSubmit'), prompt_id: randomUUID(), permission_mode: 'default', prompt };
}

export function sessionStart(cwd, home) {
  return { ...common(cwd, home, 'SessionStart'), source: 'startup' };
}

/** PostToolUse after the call {@link preToolUse} makes for `n`, with what the tool gave back. */
export function postToolUse(cwd, home, n) {
  const call = preToolUse(cwd, home, n);
  return { ...call, hook_event_name: 'PostToolUse', tool_response: { stdout: `ok ${n}\n`, stderr: '', interrupted: false, isImage: false } };
}

/** PostToolUseFailure of a Bash command. */
export function postToolUseFailure(cwd, home, n) {
  return {
    ...common(cwd, home, 'PostToolUseFailure'),
    tool_name: 'Bash',
    tool_input: { command: pick(COMMANDS)(pick(AREAS), pick(STEMS)) },
    tool_use_id: `toolu_${String(n).padStart(6, '0')}`,
    error: 'Command failed with exit code 1',
  };
}

export function stop(cwd, home) {
  return { ...common(cwd, home, 'Stop'), stop_hook_active: false };
}

export function sessionEnd(cwd, home) {
  return { ...common(cwd, home, 'SessionEnd'), reason: 'other' };
}
