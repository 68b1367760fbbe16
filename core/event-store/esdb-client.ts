/**
 * The part of @eventstore/db-client v6 the EventStoreDB adapter uses, narrowed so that an
 * in-process stand-in (test/support/fake-esdb.ts) can take the real client's place, and the
 * mapping of its events and errors onto the port's.
 */
import type {
  AllStreamResolvedEvent,
  AppendExpectedRevision,
  AppendResult as EsdbAppendResult,
  Direction,
  EventData,
  Filter,
  ReadPosition,
  ReadRevision,
  ResolvedEvent,
} from '@eventstore/db-client';
import type { DomainEvent } from '../events.js';
import { InvalidPositionError, type LogPosition, type RecordedEvent } from './port.js';

/** A streaming read: iterated to its end, or cancelled (the gRPC call stays open otherwise). */
export interface EsdbRead<E> extends AsyncIterable<E> {
  cancel(): Promise<void>;
}

export interface EsdbSubscription extends AsyncIterable<AllStreamResolvedEvent> {
  unsubscribe(): Promise<void>;
}

export interface EsdbClient {
  appendToStream(stream: string, events: EventData[], options: { expectedRevision: AppendExpectedRevision }): Promise<EsdbAppendResult>;
  readStream(stream: string, options: { direction: Direction; fromRevision: ReadRevision; maxCount?: number | bigint }): EsdbRead<ResolvedEvent>;
  readAll(options: { direction: Direction; fromPosition: ReadPosition; maxCount?: number | bigint }): EsdbRead<AllStreamResolvedEvent>;
  subscribeToAll(options: { fromPosition: ReadPosition; filter?: Filter }): EsdbSubscription;
  dispose(): Promise<void>;
}

/** The port's view of a resolved event; null for system events ($-prefixed types) and non-JSON ones. */
export function toRecorded(resolved: AllStreamResolvedEvent | ResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || e.type.startsWith('$') || !e.isJson) return null;
  const position = e.position ?? { commit: resolved.commitPosition ?? -1n, prepare: resolved.commitPosition ?? -1n };
  return {
    id: e.id,
    stream: e.streamId,
    revision: e.revision,
    position: { commit: position.commit, prepare: position.prepare },
    type: e.type,
    data: e.data,
    metadata: (e.metadata ?? {}) as Record<string, unknown>,
    created: e.created instanceof Date ? e.created.getTime() : Number(e.created),
  } as unknown as RecordedEvent<DomainEvent>;
}

/** Where a resolved event sits in $all, system events included (paging goes on from it). */
export function positionOf(resolved: AllStreamResolvedEvent): LogPosition | null {
  const p = resolved.event?.position ?? resolved.link?.position;
  if (p) return { commit: p.commit, prepare: p.prepare };
  return resolved.commitPosition === undefined ? null : { commit: resolved.commitPosition, prepare: resolved.commitPosition };
}

/** gRPC OUT_OF_RANGE: the status EventStoreDB answers a read or subscription from a position off a record boundary with. */
const OUT_OF_RANGE = 11;

/**
 * The server's refusal of a position, as the port's InvalidPositionError; other errors unchanged.
 * The client passes it on as an UnknownError carrying the gRPC status and "Invalid position".
 */
export function asPositionError(err: unknown, position: LogPosition | undefined): unknown {
  if (!position || !(err instanceof Error)) return err;
  const { code, details } = err as { code?: unknown; details?: unknown };
  const text = `${typeof details === 'string' ? details : ''} ${err.message}`;
  if (code === OUT_OF_RANGE || /invalid position/i.test(text)) return new InvalidPositionError(position, { cause: err });
  return err;
}

/**
 * Positions no EventStoreDB log holds, refused before asking: negative parts (other than the
 * port's START) or a prepare after its commit.
 */
export function isMalformed(p: LogPosition): boolean {
  if (p.commit === -1n && p.prepare === -1n) return false;
  return p.commit < 0n || p.prepare < 0n || p.prepare > p.commit;
}
