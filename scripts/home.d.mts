export declare function engramHome(env?: Record<string, string | undefined>, options?: { userHome?: string; cwd?: string }): string;
