/**
 * What every runner can be told, whatever its way of batching live events (the
 * runners' own options extend these), and what its projections may have it skip.
 */

/** How large a runner's batches are, and what is told of each. */
export interface BatchOptions {
  /** Events applied in one transaction at most (BATCH, in core.ts, by default); a thread that also does other work keeps its turns short with fewer. */
  maxBatch?: number;
  /**
   * Events applied in one transaction while `start()` catches up (maxBatch by default): a
   * runner whose thread serves nothing else until it has caught up takes larger batches.
   */
  startBatch?: number;
  /**
   * Called before each batch is applied with its number of events; for a catch-up's, which reads
   * as it applies, the most it may hold (the history sizes its page cache for it).
   */
  beforeBatch?: (events: number) => void;
}

/** What a runner's projections ignore, as they say before each read of the log. */
export interface SkipTypes {
  /** The types to leave out of the next read, asked once every event read before it is applied. */
  types(): readonly string[];
  /**
   * Types of the events after which `types()` may say otherwise (an endpoint created): a batch
   * read with the old answer is applied up to such an event only, and the log read on from it.
   */
  changedBy: ReadonlySet<string>;
}
