// Where Engram's data lives: `$ENGRAM_HOME` (a leading `~` expanded, relative paths against `cwd`), default
// `~/.engram`. Its own module, with nothing but node:os and node:path, because every hook process computes it first.
// CommonJS so the hook launcher (hooks/run.cjs) can require it without loading an ES module;
// home.mjs re-exports it for the ES modules.
'use strict';
const { isAbsolute, join, resolve } = require('node:path');

/**
 * The one rule for where Engram's data lives: src/core/env.ts, the hook launcher, the fast path and the bootstrap all
 * call this.
 */
function engramHome(env = process.env, options = {}) {
  // node:os only when HOME is unset: it is not loaded at Node's start-up, and every hook process computes this.
  const userHome = options.userHome ?? (env.HOME && env.HOME.trim() ? env.HOME : require('node:os').homedir());
  const raw = env.ENGRAM_HOME && env.ENGRAM_HOME.trim() ? env.ENGRAM_HOME : '';
  if (!raw) return join(userHome, '.engram');
  const expanded = raw === '~' ? userHome : raw.startsWith('~/') ? join(userHome, raw.slice(2)) : raw;
  return isAbsolute(expanded) ? expanded : resolve(options.cwd ?? process.cwd(), expanded);
}

module.exports = { engramHome };
