#!/usr/bin/env bash
# Engram installer. Safe to run again at any time: it only redoes what is missing or out of date.
#
#   ./install.sh                 install dependencies, build, check with `engram doctor`, register with the
#                                Claude Code and Codex CLIs that are installed (and say exactly what changed)
#   ./install.sh --no-register   the same, but leave the agents' settings alone
#
# It never edits an agent's settings files itself: registration goes through each agent's own plugin commands, and
# every command that changes something is printed before it runs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
root=$(pwd -P)
register=1
for arg in "$@"; do
  case "$arg" in
    --no-register) register=0 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { printf '%s\n' "$*"; }
step() { printf '\n==> %s\n' "$*"; }

# 1. Node.js 20.19 or newer, and npm.
command -v node >/dev/null || { echo "install.sh: Node.js is not installed (Engram needs Node 20.19+)" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is not installed" >&2; exit 1; }
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || { echo "install.sh: Node $(node -v) is too old; Engram needs Node 20.19 or newer" >&2; exit 1; }

# 2. Dependencies, with install scripts so better-sqlite3's native addon is built. Skipped when the lockfile has not
#    changed since the last successful install and the addon still loads with this Node.
#    Offline machines compile better-sqlite3 from source and need Node's headers; Debian's nodejs ships them in /usr.
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then export npm_config_nodedir=/usr; fi
stamp=node_modules/.engram-install-stamp
want=$(node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync("package-lock.json")).digest("hex")+" "+process.version)')
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
   && node -e "const D=require('better-sqlite3');new D(':memory:').close();require('sqlite-vec')" 2>/dev/null; then
  step "Dependencies are up to date"
else
  step "Installing dependencies (npm ci; compiling the SQLite addon can take a minute)"
  npm ci --include=dev --no-audit --no-fund --loglevel=error
  printf '%s' "$want" >"$stamp"
fi

# 3. Manifests and bundles.
step "Building"
node scripts/manifests.mjs --check
node scripts/build.mjs

# 4. The strong embedding model when the hub can be reached (checksum-verified, HF_ENDPOINT and proxies honoured);
#    when it cannot, one line says so and search keeps the offline encoder. ENGRAM_MODEL_PULL=off skips this.
step "Embedding model"
node bin/engram model pull --if-reachable --pretty || say "  (model pull failed; search keeps its current model)"

# 5. Agent registration, through each agent's own CLI.
claude_bin=$(command -v claude || true)
codex_bin=$(command -v codex || true)
if [ "$register" = 1 ] && [ -n "$claude_bin" ]; then
  step "Registering with Claude Code ($claude_bin)"
  say "  running: claude plugin marketplace add $root"
  say "    (adds marketplace 'engram' to ~/.claude/settings.json extraKnownMarketplaces and ~/.claude/plugins/known_marketplaces.json)"
  claude plugin marketplace add "$root"
  say "  running: claude plugin install engram@engram"
  say "    (sets enabledPlugins[\"engram@engram\"] in ~/.claude/settings.json and records it in ~/.claude/plugins/installed_plugins.json)"
  claude plugin install engram@engram
fi
if [ "$register" = 1 ] && [ -n "$codex_bin" ]; then
  step "Registering with Codex ($codex_bin)"
  say "  running: codex plugin marketplace add $root"
  say "    (adds [marketplaces.engram] to \${CODEX_HOME:-~/.codex}/config.toml)"
  codex plugin marketplace add "$root"
  say "  running: codex plugin add engram@engram"
  say "    (adds [plugins.\"engram@engram\"] enabled = true to config.toml and copies this folder to its plugin cache)"
  codex plugin add engram@engram
  say "  Codex runs a plugin's hooks only after you trust them: start codex, open /hooks, and trust the Engram hooks"
  say "  (or let Engram record that trust through Codex's own app-server: engram hooks trust --agent codex)."
fi

# 6. Check the result.
step "Checking the installation (engram doctor)"
set +e
node bin/engram doctor --pretty
doctor=$?
set -e

# 6. The main job, visible: a scripted session through the real hooks, in a throwaway home (yours is not touched).
step "What the hooks do (engram demo: a scripted session in a throwaway home)"
node bin/engram demo --pretty || say "  (the demo did not finish; the installation itself is unaffected)"

step "Done"
if [ "$register" = 0 ] || [ -z "$claude_bin" ]; then
  say "Claude Code: not registered by this script. To install Engram as a plugin:"
  say "  claude plugin marketplace add $root && claude plugin install engram@engram"
  say "  (or inside Claude Code: /plugin marketplace add $root, then /plugin install engram@engram)"
fi
if [ "$register" = 0 ] || [ -z "$codex_bin" ]; then
  say "Codex: not registered by this script. To install Engram as a plugin:"
  say "  codex plugin marketplace add $root && codex plugin add engram@engram   (then trust its hooks in /hooks)"
fi
say "The engram command is $root/bin/engram; to have it on your PATH:  ln -s \"$root/bin/engram\" ~/.local/bin/engram"
say "Your data lives in \${ENGRAM_HOME:-~/.engram}."
exit $doctor
