/**
 * Where a conversation's live channel keeps its files: the payload store's own medium, under its
 * `live/` folder or prefix. Folders are `/`-separated paths below it; a name holds no `/`.
 */
export interface LiveStore {
  /** How often a follower lists its conversation's entries while they come: each listing is one request to the store. */
  readonly readIntervalMs: number;
  /** How often it lists them once none came for a while (an idle conversation, an open chat). */
  readonly idleReadIntervalMs: number;
  /**
   * How long a process reuses a listing of a conversation's followers before listing again. A writer
   * that misses a follower who just came costs that follower a query to the log, nothing more.
   */
  readonly followersListingMs: number;
  /** The files directly in `folder` whose names sort after `after` (all, without it); none for no folder. */
  names(folder: string, after?: string): Promise<string[]>;
  /** The files directly in `folder`, each with when it was last written (ms since the epoch). */
  written(folder: string): Promise<Map<string, number>>;
  /** Writes a file whole, replacing one of that name: a reader sees all of it or nothing. */
  write(folder: string, name: string, bytes: Uint8Array): Promise<void>;
  /** A file's bytes; undefined once it is gone. */
  read(folder: string, name: string): Promise<Uint8Array | undefined>;
  /** Deletes a file; one already gone is no error. */
  remove(folder: string, name: string): Promise<void>;
}
