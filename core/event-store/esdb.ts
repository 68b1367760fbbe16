/**
 * EventStoreDB adapter (`esdb://` URLs) over @eventstore/db-client v6: what a
 * fleet that outgrows one machine runs on. It maps our port one to one onto
 * the client; system events ($-prefixed types) are never surfaced.
 */
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type JSONType,
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { DomainEvent } from '../events.js';
import {
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  WrongExpectedRevisionError,
  comparePositions,
} from './port.js';
import { StoreWriteError } from './write-health.js';

export class EsdbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString`${connectionString}`;
  }

  async appendToStream(
    stream: string,
    events: EventToAppend[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    const expected = toEsdbExpected(options.expectedRevision ?? 'any');
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) =>
          jsonEvent({
            id: e.id,
            type: e.type,
            data: e.data as unknown as JSONType,
            metadata: (e.metadata ?? {}) as JSONType,
          }),
        ),
        { expectedRevision: expected },
      );
      const p = result.position ?? { commit: -1n, prepare: -1n };
      return { nextExpectedRevision: result.nextExpectedRevision, position: { commit: p.commit, prepare: p.prepare } };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const actual = err.actualVersion;
        throw new WrongExpectedRevisionError(
          stream,
          options.expectedRevision ?? 'any',
          typeof actual === 'bigint' ? actual : 'no_stream',
        );
      }
      // The client's error type (unavailable, deadline-exceeded, ...) as the code write-health.ts reports.
      const type = (err as { type?: unknown }).type;
      throw new StoreWriteError(`ESDB_${typeof type === 'string' ? type.toUpperCase().replace(/-/g, '_') : 'ERROR'}`, (err as Error).message, { cause: err });
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
        fromRevision: from === 'start' ? START : from === 'end' ? END : from,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        const e = toRecorded(resolved);
        if (e) out.push(e);
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? 1000;
    const skipped = skippedTypes(options.skipTypes);
    const out: RecordedEvent[] = [];
    // ESDB reads from a position inclusively; our port reads strictly after it. Skipped types
    // are left out here, so with some the read runs on until `max` events are kept.
    const read = this.client.readAll({
      fromPosition: options.after ?? START,
      direction: FORWARDS,
      ...(skipped ? {} : { maxCount: max + 1 }),
    });
    for await (const resolved of read) {
      const e = toRecorded(resolved);
      if (!e || skipped?.has(e.type)) continue;
      if (options.after && comparePositions(e.position, options.after) <= 0) continue;
      out.push(e);
      if (out.length >= max) break;
    }
    return out;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const skipped = skippedTypes(options.skipTypes);
    const subscription = this.client.subscribeToAll({
      fromPosition: options.after ?? START,
      filter: excludeSystemEvents(),
    });
    return {
      async close() {
        await subscription.unsubscribe();
      },
      async *[Symbol.asyncIterator]() {
        for await (const resolved of subscription) {
          const e = toRecorded(resolved);
          if (!e || skipped?.has(e.type)) continue;
          // Subscriptions from a position already skip it; this guards the START case.
          if (options.after && comparePositions(e.position, options.after) <= 0) continue;
          yield e;
        }
      },
    };
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

/** The types a read leaves out, or null for none. */
function skippedTypes(types: readonly string[] | undefined): ReadonlySet<string> | null {
  return types && types.length > 0 ? new Set(types) : null;
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return expected;
}

function toRecorded(resolved: AllStreamResolvedEvent | ResolvedEvent): RecordedEvent | null {
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
