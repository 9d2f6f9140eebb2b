#!/usr/bin/env node
// Derives every agent-facing manifest from the top-level plugin.json, the single source of the plugin's identity:
//   .claude-plugin/plugin.json, .claude-plugin/marketplace.json  (Claude Code plugin + this repo as its marketplace)
//   .codex-plugin/plugin.json, .agents/plugins/marketplace.json  (Codex plugin + marketplace)
//   hooks/hooks.json (Claude Code), hooks/codex-hooks.json (Codex), and package.json's version. plugin.json's
//   mcpServers go into the Claude Code manifest (Codex gets them from `engram hooks install --agent codex`).
//
//   node scripts/manifests.mjs           write them
//   node scripts/manifests.mjs --check   exit 1 and name every file that differs (the drift test runs this)
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hookGroups } from './hook-registry.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const read = (file) => readFileSync(join(root, file), 'utf8');
const plugin = JSON.parse(read('plugin.json'));

const GENERATED = 'Generated from plugin.json by scripts/manifests.mjs; edit plugin.json instead.';

/** One hooks file: `node run.cjs <entry> --agent <agent>` per event, with the root variable each agent substitutes. */
function hooksFile(agent) {
  const rootVar = agent === 'claude' ? '${CLAUDE_PLUGIN_ROOT}' : '${PLUGIN_ROOT}';
  return { description: `${plugin.displayName}: ${GENERATED}`, hooks: hookGroups(plugin, agent, rootVar) };
}

const common = {
  name: plugin.name,
  version: plugin.version,
  description: plugin.description,
  author: plugin.author,
  license: plugin.license,
  keywords: plugin.keywords,
};
const hasMcp = Object.keys(plugin.mcpServers ?? {}).length > 0;

const files = {
  // Claude Code loads hooks/hooks.json by default; naming it again in the manifest makes it load twice.
  '.claude-plugin/plugin.json': { ...common, ...(hasMcp ? { mcpServers: plugin.mcpServers } : {}) },
  '.claude-plugin/marketplace.json': {
    name: plugin.marketplace.name,
    owner: plugin.marketplace.owner,
    metadata: { description: GENERATED },
    plugins: [{ name: plugin.name, source: './', description: plugin.description, version: plugin.version, category: plugin.marketplace.category.toLowerCase() }],
  },
  // No mcpServers here: Codex 0.169 does not start MCP servers a plugin declares (tried, inline and as ./.mcp.json).
  // `engram hooks install --agent codex` registers the same entry in config.toml instead (services/registration/mcp.ts).
  '.codex-plugin/plugin.json': {
    ...common,
    hooks: './hooks/codex-hooks.json',
    interface: { displayName: plugin.displayName },
  },
  '.agents/plugins/marketplace.json': {
    name: plugin.marketplace.name,
    interface: { displayName: plugin.displayName },
    plugins: [
      {
        name: plugin.name,
        source: { source: 'local', path: './' },
        policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' },
        category: plugin.marketplace.category,
      },
    ],
  },
  'hooks/hooks.json': hooksFile('claude'),
  'hooks/codex-hooks.json': hooksFile('codex'),
};

const render = (value) => `${JSON.stringify(value, null, 2)}\n`;
const pkgText = read('package.json');
const pkgWanted = pkgText.replace(/"version":\s*"[^"]*"/, `"version": "${plugin.version}"`);

const check = process.argv.includes('--check');
const drift = [];
for (const [file, value] of Object.entries(files)) {
  let current = '';
  try {
    current = read(file);
  } catch {}
  if (current === render(value)) continue;
  if (check) drift.push(file);
  else {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), render(value));
  }
}
if (pkgText !== pkgWanted) {
  if (check) drift.push('package.json (version)');
  else writeFileSync(join(root, 'package.json'), pkgWanted);
}
if (check && drift.length) {
  process.stderr.write(`out of date with plugin.json: ${drift.join(', ')}\nrun: node scripts/manifests.mjs\n`);
  process.exit(1);
}
process.stdout.write(check ? 'manifests match plugin.json\n' : `wrote manifests from plugin.json (${plugin.name} ${plugin.version})\n`);
