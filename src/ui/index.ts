/**
 * The viewer surface (`engram ui`): a page and its JSON API, served by the warm server under `/ui` on the HTTP
 * listener, guarded by a per-launch secret on top of the HTTP API's Host and Origin checks. The page itself is
 * src/ui/client/ (browser code, bundled by scripts/build.mjs into dist/ui/).
 * @module
 */
export { viewerApp, secretMatches, UI_SECRET_HEADER, VIEWER_USER } from './api.js';
export type { ViewerContext } from './api.js';
