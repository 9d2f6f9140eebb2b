export declare const EXTERNAL: string[];
export declare const REQUIRE_BANNER: string;
export declare function bundleEntry(entry: string, outfile: string): Promise<string>;
export declare const BASE_OPTIONS: Record<string, unknown>;
