/**
 * The event store port, shaped on EventStoreDB's own API so that the embedded
 * SQLite adapter and the EventStoreDB adapter are honest twins. Both pass the
 * same contract suite (test/core/event-store.contract.ts).
 */
import type { DomainEvent } from '../events.js';

/** Global position in the log ($all). SQLite uses the same number for both parts. */
export interface LogPosition {
  commit: bigint;
  prepare: bigint;
}

export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface EventMetadata {
  correlation_id?: string;
  causation_id?: string;
  [key: string]: unknown;
}

/** An event to append. `id` (a UUID) makes the append idempotent: an id already stored is not written again. */
export type EventToAppend<E extends DomainEvent = DomainEvent> = E & { id: string; metadata?: EventMetadata };

export type RecordedEvent<E extends DomainEvent = DomainEvent> = E & {
  id: string;
  stream: string;
  /** 0-based position inside its stream. */
  revision: bigint;
  position: LogPosition;
  metadata: EventMetadata;
  /** When the store recorded it, ms since epoch. */
  created: number;
};

export interface AppendResult {
  /** The stream's last revision after the append. */
  nextExpectedRevision: bigint;
  /** Position of the last event written (or of the stream's last event when every id was a duplicate). */
  position: LogPosition;
}

export interface ReadStreamOptions {
  fromRevision?: bigint | 'start' | 'end';
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
}

/** Which event types a read keeps: give at most one of the two. */
export interface TypeFilterOptions {
  /**
   * Events of these types are left out, as if the log did not hold them: a reader that
   * would ignore them (webhook delivery while no endpoint takes fixes) then neither reads
   * nor parses them. `maxCount` counts the events returned, not those skipped.
   */
  skipTypes?: readonly string[];
  /**
   * Only events of these types are read (at least one type): a follower of a few types (the
   * gateway's log follower) neither reads nor parses the rest, and still moves past them.
   */
  onlyTypes?: readonly string[];
}

export interface ReadAllOptions extends TypeFilterOptions {
  /** Read events strictly after this position; from the start when absent. */
  after?: LogPosition;
  maxCount?: number;
}

export interface SubscribeToAllOptions extends TypeFilterOptions {
  /**
   * Read events strictly after this position; from the start when absent; with 'end', only
   * events appended after the log's end as the subscription's first read finds it.
   */
  after?: LogPosition | 'end';
}

/** A read's type filter: the types it keeps (`only`) or leaves out; null keeps every type. */
export type TypeFilter = { only: boolean; types: readonly string[] } | null;

/** The filter `options` ask for; throws for both options at once or an empty `onlyTypes`. */
export function typeFilterOf(options: TypeFilterOptions): TypeFilter {
  if (options.onlyTypes === undefined) return options.skipTypes && options.skipTypes.length > 0 ? { only: false, types: options.skipTypes } : null;
  if (options.skipTypes !== undefined) throw new TypeError('a read takes skipTypes or onlyTypes, not both');
  if (options.onlyTypes.length === 0) throw new TypeError('onlyTypes needs at least one event type');
  return { only: true, types: options.onlyTypes };
}

/** Whether a read with `options` keeps an event of a type, as a test of the type; null when it keeps every type. */
export function typeTestOf(options: TypeFilterOptions): ((type: string) => boolean) | null {
  const filter = typeFilterOf(options);
  if (!filter) return null;
  const types = new Set(filter.types);
  return filter.only ? (type) => types.has(type) : (type) => !types.has(type);
}

export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  /** Appends atomically; rejects with WrongExpectedRevisionError when `expectedRevision` does not hold. */
  appendToStream(
    stream: string,
    events: EventToAppend[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
  /** Events of one stream; an empty array when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Events of every stream in commit order (system events excluded). */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Catch-up subscription to every event after `after` (or from the start), then live. */
  subscribeToAll(options?: SubscribeToAllOptions): Subscription;
  /**
   * A small committed write outside the log, to learn whether the store writes again after a
   * failure (write-health.ts); rejects with a StoreWriteError while it cannot. SQLite and PostgreSQL.
   */
  probeWrite?(): Promise<void>;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/**
 * A position the store cannot read from: not on one of its record boundaries (a checkpoint or
 * `Last-Event-ID` from another store, or forged). Callers rebuild or refuse instead of retrying.
 */
export class InvalidPositionError extends Error {
  constructor(
    readonly position: LogPosition,
    options?: { cause?: unknown },
  ) {
    super(`position ${position.commit}/${position.prepare} is not a position of this store`, options);
    this.name = 'InvalidPositionError';
  }
}

export const START: LogPosition = { commit: -1n, prepare: -1n };

export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** Checkpoints are stored as text: "commit/prepare". */
export function positionToString(p: LogPosition): string {
  return `${p.commit}/${p.prepare}`;
}

export function positionFromString(s: string): LogPosition {
  const [commit, prepare] = s.split('/');
  return { commit: BigInt(commit ?? '-1'), prepare: BigInt(prepare ?? commit ?? '-1') };
}
