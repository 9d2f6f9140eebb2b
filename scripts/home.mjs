// The rule for where Engram's data lives, for ES modules: it is written once, in hooks/run.cjs (the hook launcher
// computes it on every agent event), and re-exported by home.cjs.
export { engramHome } from './home.cjs';
