/**
 * SessionEnd hook (see events.ts for what it does, entry.ts for how it answers).
 * @module
 */
import { runHookEntry } from './entry.js';

await runHookEntry('SessionEnd');
