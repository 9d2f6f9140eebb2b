// Minimal declarations for the two wink packages (they ship none). Only what Engram calls.
declare module 'wink-nlp-utils/src/tokens-remove-words.js' {
  /** Removes wink's 153 English stop words. */
  export default function removeWords(tokens: string[]): string[];
}

declare module 'wink-nlp-utils/src/string-stem.js' {
  /** Porter2 stemmer. */
  export default function stem(word: string): string;
}

declare module 'wink-bm25-text-search' {
  export interface Bm25Engine {
    defineConfig(config: {
      fldWeights: Record<string, number>;
      bm25Params?: { k1?: number; b?: number; k?: number };
      ovFldNames?: string[];
    }): boolean;
    definePrepTasks(tasks: Array<(input: string) => string[]>, field?: string): number;
    addDoc(doc: Record<string, unknown>, id: string | number): number;
    consolidate(fp?: number): boolean;
    search(
      text: string,
      limit?: number,
      filter?: (fieldValues: Record<string, unknown>, params: unknown) => boolean,
      params?: unknown,
    ): Array<[string, number]>;
    exportJSON(): string;
    importJSON(json: string): boolean;
    getTotalDocs(): number;
    /** Token → token index (after consolidate). */
    getTokens(): Record<string, number>;
    getTotalCorpusLength(): number;
    /** Token index → IDF (after consolidate; empty after importJSON, which does not carry it). */
    getIDF(): number[];
    /** Document id → its weighted term frequencies by token index. */
    getDocs(): Record<string, { freq: Record<string, number> }>;
    reset(): boolean;
  }
  export default function bm25(): Bm25Engine;
}
