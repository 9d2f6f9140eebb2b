// The rule for where Engram's data lives, for ES modules: it is written once, in home.cjs (CommonJS, so the hook
// launcher can require it cheaply).
export { engramHome } from './home.cjs';
