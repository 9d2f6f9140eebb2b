export function registerSyncCommands(_p: unknown, _a: unknown): void {}
