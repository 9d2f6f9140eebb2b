// Where Engram's data lives: `$ENGRAM_HOME` (a leading `~` expanded, relative paths against `cwd`), default
// `~/.engram`. The rule is written once, in hooks/run.cjs: the hook launcher computes it on every agent event and
// cannot afford to load one more module for it (docs/PERFORMANCE.md). This CommonJS module re-exports it for
// everything else; home.mjs does the same for ES modules.
'use strict';
module.exports = { engramHome: require('../hooks/run.cjs').engramHome };
