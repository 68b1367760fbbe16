/**
 * The one way a command writes. Each aggregate (a stream kind) says how its
 * state grows from its events (`evolve`); each command is a pure `decide` from
 * that state to the events to append, throwing `CommandRejected` to refuse.
 * `handle` is where the side effects are: it loads the stream, folds it,
 * decides, and appends expecting the stream to be as it was read. When
 * another writer got in first it loads and decides again, a few times.
 */
import type { DomainEvent } from '../events.js';
import type { EventMetadata, EventStore, ExpectedRevision, LogPosition, RecordedEvent } from '../event-store/port.js';
import { WrongExpectedRevisionError } from '../event-store/port.js';
import { randomUuid } from '../ids.js';

export interface Aggregate<S> {
  /** The state of a stream without events. */
  readonly initial: S;
  evolve(state: S, event: RecordedEvent): S;
  /**
   * 'first': the state comes from the stream's first event alone (a creation), so later
   * events cannot make a decision wrong: appends then only expect the stream to exist,
   * and long streams (a tenant's tokens, a user's sessions) are never read whole.
   */
  readonly reads?: 'whole' | 'first';
}

/** A stream's state and the revision an append decided on it must expect. */
export interface Loaded<S> {
  state: S;
  expected: ExpectedRevision;
}

/** An event a decision appends: the handler gives it a random id unless it carries one (a resend must keep its id). */
export type NewEvent = DomainEvent & { id?: string; metadata?: EventMetadata };

export interface Command<S> {
  stream: string;
  aggregate: Aggregate<S>;
  /** Pure: the events to append (none: nothing to do), or a thrown CommandRejected. */
  decide(state: S): NewEvent[];
}

export interface Handled {
  /** Where the last event landed; null when the decision appended nothing. */
  position: LogPosition | null;
  /** What was appended, ids included. */
  events: Array<NewEvent & { id: string }>;
}

/** Attempts before a stream other writers keep moving is given up on (the conflict is thrown). */
export const DEFAULT_ATTEMPTS = 5;

export async function load<S>(store: EventStore, stream: string, aggregate: Aggregate<S>): Promise<Loaded<S>> {
  const first = aggregate.reads === 'first';
  const events = await store.readStream(stream, first ? { maxCount: 1 } : {});
  const state = events.reduce((s, e) => aggregate.evolve(s, e), aggregate.initial);
  const last = events.at(-1);
  const expected: ExpectedRevision = !last ? 'no_stream' : first ? 'stream_exists' : last.revision;
  return { state, expected };
}

/**
 * Loads (or starts from `loaded`, a state the caller read to gather facts for the
 * decision), decides and appends. `attempts: 1` for a decision whose facts would not
 * hold on a newer state: the conflict is then the caller's to answer.
 */
export async function handle<S>(
  store: EventStore,
  command: Command<S>,
  options: { loaded?: Loaded<S>; attempts?: number } = {},
): Promise<Handled> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  let loaded = options.loaded;
  for (let attempt = 1; ; attempt++) {
    loaded ??= await load(store, command.stream, command.aggregate);
    const events = command.decide(loaded.state).map((e) => ({ ...e, id: e.id ?? randomUuid() }));
    if (events.length === 0) return { position: null, events };
    try {
      const result = await store.appendToStream(command.stream, events, { expectedRevision: loaded.expected });
      return { position: result.position, events };
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError) || attempt >= attempts) throw err;
      loaded = undefined;
    }
  }
}
