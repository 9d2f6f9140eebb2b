declare const __ENGRAM_VERSION__: string | undefined;

/** Engram's version: stamped into the bundles by scripts/build.mjs from package.json; `dev` when run from source. */
export const VERSION: string = typeof __ENGRAM_VERSION__ === 'string' ? __ENGRAM_VERSION__ : 'dev';
