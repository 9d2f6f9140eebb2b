import { workEnvironment } from '../services/index.js';

/** Where the agent works, as hooks see it: detected once per folder and cached (services/inject). */
export const hookEnvironment = workEnvironment;
