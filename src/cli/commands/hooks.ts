import { Option, type Command } from 'commander';
import {
  AGENTS,
  SCOPES,
  gitHooksStatus,
  installGitHooks,
  uninstallGitHooks,
  type GitHooksResult,
  hooksStatus,
  installHooks,
  trustHooks,
  uninstallHooks,
  type Agent,
  type HookEntry,
  type HooksStatus,
  type RegistrationResult,
  type Scope,
  type TrustReport,
} from '../../services/index.js';
import { join } from 'node:path';
import type { Action } from '../action.js';

interface RegistrationFlags {
  agent: Agent;
  scope: Scope;
  dryRun?: boolean;
  trust?: boolean;
  codexBin?: string;
}

const agentOption = (required: boolean): Option => {
  const option = new Option('--agent <agent>', 'claude or codex').choices(AGENTS);
  return required ? option.makeOptionMandatory() : option;
};
const scopeOption = (): Option =>
  new Option(
    '--scope <scope>',
    'user (your own settings), project (<repo>/.claude or .codex, usually committed) or local (<repo>/.claude/settings.local.json; Claude only)',
  )
    .choices(SCOPES)
    .default('user');
const codexBinOption = (): Option => new Option('--codex-bin <path>', 'the Codex CLI to ask (default: $CODEX_BIN, else codex on $PATH)');

const entryLine = (sign: string, entry: HookEntry): string => `  ${sign} ${entry.event}${entry.matcher ? ` [${entry.matcher}]` : ''}: ${entry.command}`;

function renderTrust(trust: TrustReport): string[] {
  return [
    `trust (${trust.codex}):`,
    ...trust.trusted.map((hook) => `  trusted now: ${hook.event} (${hook.key})`),
    ...trust.already_trusted.map((hook) => `  already trusted: ${hook.event} (${hook.key})`),
    ...trust.failed.map((hook) => `  NOT trusted: ${hook.event} (${hook.key}): ${hook.reason}`),
    ...trust.warnings.map((warning) => `  codex warning: ${warning}`),
  ];
}

function renderRegistration(result: RegistrationResult, verb: string): string {
  const head = `${result.dry_run ? '[dry run] ' : ''}${result.changed ? `${verb} ${result.file}` : `${result.file}: no change`} (${result.agent}, scope ${result.scope})`;
  return [
    head,
    ...result.removed.map((entry) => entryLine('-', entry)),
    ...result.added.map((entry) => entryLine('+', entry)),
    ...(result.trust ? renderTrust(result.trust) : []),
    ...result.warnings.map((warning) => `warning: ${warning}`),
    ...result.next_steps.map((step) => `next: ${step}`),
  ].join('\n');
}

function renderStatus(status: HooksStatus): string {
  const lines: string[] = [];
  for (const agent of status.agents) {
    lines.push(`${agent.agent}: ${agent.status} — ${agent.summary}`);
    const plugins = agent.plugin.installed.map((id) => `${id} (${agent.plugin.enabled.includes(id) ? 'enabled' : 'disabled'})`);
    if (plugins.length) lines.push(`  plugin: ${plugins.join(', ')}`);
    for (const settings of agent.settings) {
      const roots = settings.roots.map((root) => `${root.root || '?'} (${root.state})`).join(', ');
      lines.push(`  ${settings.scope}: ${settings.hooks} hooks in ${settings.file} → ${roots}`);
    }
    if (agent.trust) {
      lines.push(`  trust (from ${agent.trust.source}): ${agent.trust.trusted} trusted, ${agent.trust.untrusted} not trusted, ${agent.trust.modified} modified`);
      if (agent.trust.note) lines.push(`    ${agent.trust.note}`);
    }
    for (const problem of agent.problems) lines.push(`  problem: ${problem.detail}${problem.fix ? `\n    fix: ${problem.fix}` : ''}`);
  }
  return lines.join('\n');
}

function renderGitHooks(result: GitHooksResult): string {
  return [
    `${result.dry_run ? '[dry run] ' : ''}${result.root} (hooks in ${result.hooks_dir})`,
    ...result.hooks.map((hook) => `  ${hook.hook}: ${hook.action}${hook.note ? ` — ${hook.note}` : ''}`),
  ].join('\n');
}

/** hooks install | uninstall | trust | status: Engram's hooks in agent settings files, for users without plugins. */
export function registerHooksCommands(program: Command, action: Action): void {
  const hooks = program
    .command('hooks')
    .description("register Engram's hooks in Claude Code or Codex settings files (instead of installing the plugin), and trust them in Codex");

  hooks
    .command('install')
    .description("add Engram's hooks (run from this install) to an agent's settings file, replacing older Engram entries; nothing else changes")
    .addOption(agentOption(true))
    .addOption(scopeOption())
    .option('--dry-run', 'show what would change; write nothing')
    .option('--trust', 'Codex: then trust the installed hooks through codex app-server (passing it is your consent; see engram hooks trust --help)')
    .addOption(codexBinOption())
    .action(
      action(async (context, flags: RegistrationFlags) => {
        const result = await installHooks({
          agent: flags.agent,
          scope: flags.scope,
          env: context.env(),
          cwd: context.io.cwd,
          installRoot: context.installRoot,
          dryRun: flags.dryRun ?? false,
          ...(flags.trust ? { trust: { codexBin: flags.codexBin, vars: context.io.env } } : {}),
        });
        return { result, pretty: () => renderRegistration(result, 'updated'), exitCode: result.trust?.failed.length ? 1 : 0 };
      }),
    );

  hooks
    .command('uninstall')
    .description("remove Engram's hooks (from any install folder) from an agent's settings file; nothing else changes")
    .addOption(agentOption(true))
    .addOption(scopeOption())
    .option('--dry-run', 'show what would change; write nothing')
    .action(
      action((context, flags: RegistrationFlags) => {
        const result = uninstallHooks({
          agent: flags.agent,
          scope: flags.scope,
          env: context.env(),
          cwd: context.io.cwd,
          installRoot: context.installRoot,
          dryRun: flags.dryRun ?? false,
        });
        return { result, pretty: () => renderRegistration(result, 'updated') };
      }),
    );

  hooks
    .command('trust')
    .summary("Codex: trust Engram's hooks through codex app-server (running this is your consent)")
    .description(
      "Codex: trust Engram's hooks. Codex runs a hook only after you trust its exact definition (its /hooks screen); " +
        "running this command is your consent: it asks codex app-server for Engram's hooks (and only Engram's) and records " +
        "Codex's own hash of each in config.toml [hooks.state], as /hooks would",
    )
    .addOption(agentOption(true))
    .addOption(codexBinOption())
    .action(
      action(async (context, flags: RegistrationFlags) => {
        const result = await trustHooks({
          agent: flags.agent,
          env: context.env(),
          cwd: context.io.cwd,
          codexBin: flags.codexBin,
          vars: context.io.env,
        });
        return { result, pretty: () => renderTrust(result).join('\n'), exitCode: result.failed.length ? 1 : 0 };
      }),
    );

  hooks
    .command('status')
    .description("where Engram's hooks are registered (plugin, settings files) and, for Codex, whether they are trusted")
    .addOption(agentOption(false))
    .addOption(codexBinOption())
    .action(
      action(async (context, flags: Partial<RegistrationFlags>) => {
        const result = await hooksStatus({
          env: context.env(),
          cwd: context.io.cwd,
          installRoot: context.installRoot,
          vars: context.io.env,
          codexBin: flags.codexBin,
          ...(flags.agent ? { agents: [flags.agent] } : {}),
        });
        return { result, pretty: () => renderStatus(result) };
      }),
    );

  const git = hooks
    .command('git')
    .description('git hooks of an opted-in repository: pre-commit ingests new sessions and stages their tapes, post-merge rebuilds the index');
  git
    .command('install')
    .description('add Engram to pre-commit and post-merge (existing hooks keep running; ENGRAM_GIT_HOOKS_OFF=1 skips it once)')
    .option('--dry-run', 'show what would change; write nothing')
    .action(
      action((context, flags: { dryRun?: boolean }) => {
        const result = installGitHooks({ cwd: context.io.cwd, engram: join(context.installRoot, 'bin', 'engram'), dryRun: flags.dryRun ?? false });
        return { result, pretty: () => renderGitHooks(result) };
      }),
    );
  git
    .command('uninstall')
    .description("remove Engram's lines from the git hooks (and a hook file that held nothing else); nothing else changes")
    .option('--dry-run', 'show what would change; write nothing')
    .action(
      action((context, flags: { dryRun?: boolean }) => {
        const result = uninstallGitHooks({ cwd: context.io.cwd, dryRun: flags.dryRun ?? false });
        return { result, pretty: () => renderGitHooks(result) };
      }),
    );
  git
    .command('status')
    .description("which git hooks hold Engram's lines")
    .action(
      action((context) => {
        const result = gitHooksStatus({ cwd: context.io.cwd });
        return { result, pretty: () => renderGitHooks(result) };
      }),
    );
}
