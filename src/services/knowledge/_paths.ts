import { join } from 'node:path';

/** Where a project's knowledge config lives, relative to the repository root (its presence is the opt-in). */
export const CONFIG_FILE = join('.engram', 'config.yaml');
