export { injectAtSessionStart, injectForQuery } from './inject.js';
export type { InjectDeps, InjectLimits, HookEnvironment, Injection } from './inject.js';
export { promptQuery, toolQuery, failureQuery, patchFiles, QUERY_CHARS } from './query.js';
export { chooseHits, contentTerms, relevance, withoutGenericWords } from './choose.js';
export type { Chosen, Relevance } from './choose.js';
export { renderBlock, renderItem, BLOCK_OPEN, BLOCK_CLOSE } from './render.js';
export type { RenderedBlock } from './render.js';
export { sessionStartPicks } from './session-start.js';
export { INJECT } from './tuning.js';
