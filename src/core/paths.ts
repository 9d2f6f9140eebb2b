import { join } from 'node:path';

/** Where Engram keeps its data inside `$ENGRAM_HOME`. One place, so docs/ARCHITECTURE.md can point at it. */
export interface HomePaths {
  /** `$ENGRAM_HOME` itself (default `~/.engram`). */
  home: string;
  /** The SQLite store (WAL mode: `engram.db-wal` and `engram.db-shm` sit beside it). */
  db: string;
  /** Optional user configuration. */
  config: string;
  /** Log folder; one rotating JSON-lines file per component. */
  logs: string;
  /** First-run bootstrap state and locks, one pair per plugin install folder. */
  bootstrap: string;
  /** Embedding models fetched by `engram model pull` (transformers.js layout: `<org>/<name>/onnx/…`). */
  models: string;
  /** Search index snapshots (the consolidated BM25 index), rebuilt from the store whenever it is stale. */
  index: string;
  /**
   * Derived data that is cheap to rebuild and safe to delete at any time (`env/`: detected environments per working
   * directory, so hooks skip re-reading agent configs and package.json on every call).
   */
  cache: string;
}

/** Builds every data path from the home folder. */
export function homePaths(home: string): HomePaths {
  return {
    home,
    db: join(home, 'engram.db'),
    config: join(home, 'config.json'),
    logs: join(home, 'logs'),
    bootstrap: join(home, 'bootstrap'),
    models: join(home, 'models'),
    index: join(home, 'index'),
    cache: join(home, 'cache'),
  };
}
