export { initRepo } from './init.js';
export type { InitResult } from './init.js';
