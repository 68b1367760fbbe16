/**
 * The gateway's follower of the shared log: the few event types parts of a node act on when
 * another node wrote them (a device's login there; device commands later), read from the log's
 * end at start and handed to the handlers of their type. Only those types are read
 * (`onlyTypes`). A subscription that fails is opened again after a backoff, from the last event
 * handed over; failures are logged at most once per interval.
 */
import type { Clock } from '../core/clock.js';
import type { DomainEvent } from '../core/events.js';
import type { EventStore, LogPosition, RecordedEvent, Subscription } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import { LogThrottle } from './log-throttle.js';

export type LogEventType = DomainEvent['type'];
export type LogEventOf<T extends LogEventType> = RecordedEvent<Extract<DomainEvent, { type: T }>>;

export interface LogFollowerOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  /** The first wait before a failed subscription is opened again; it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

export const FOLLOWER_RETRY_MS = 100;
export const FOLLOWER_MAX_RETRY_MS = 10_000;
/** At most one line per kind of failure in this interval; the next says how many were not logged. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

export class LogFollower {
  private readonly handlers = new Map<LogEventType, Array<(e: RecordedEvent) => void>>();
  private readonly failureLog = new LogThrottle(FAILURE_LOG_INTERVAL_MS);
  /** Where the next subscription starts: the last event handed over, or the log's end before any. */
  private after: LogPosition | 'end' = 'end';
  private subscription: Subscription | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private wakeFromPause: (() => void) | null = null;

  constructor(private readonly options: LogFollowerOptions) {}

  /** Registers a handler of one event type; before `start`, since the subscription names the types it reads. */
  on<T extends LogEventType>(type: T, handler: (e: LogEventOf<T>) => void): void {
    if (this.running) throw new Error('log follower: handlers are registered before it starts');
    const list = this.handlers.get(type) ?? [];
    list.push(handler as (e: RecordedEvent) => void);
    this.handlers.set(type, list);
  }

  /** Follows the log from its end; with no handler registered there is nothing to read. */
  start(): void {
    if (this.running || this.stopped || this.handlers.size === 0) return;
    this.running = this.run();
  }

  /** Closes the subscription (or ends a backoff) and resolves once the follower has let go of the store. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeFromPause?.();
    await this.subscription?.close().catch(() => undefined);
    await this.running;
  }

  private async run(): Promise<void> {
    const { retryMs = FOLLOWER_RETRY_MS, maxRetryMs = FOLLOWER_MAX_RETRY_MS } = this.options;
    let wait = retryMs;
    while (!this.stopped) {
      try {
        const subscription = this.options.store.subscribeToAll({ after: this.after, onlyTypes: [...this.handlers.keys()] });
        this.subscription = subscription;
        try {
          for await (const e of subscription) {
            if (this.stopped) break;
            this.after = e.position;
            wait = retryMs;
            this.dispatch(e);
          }
        } finally {
          this.subscription = null;
          await subscription.close().catch(() => undefined);
        }
        if (this.stopped) return;
        this.failed('subscription', new Error('the subscription ended'), wait);
      } catch (err) {
        if (this.stopped) return;
        this.failed('subscription', err, wait);
      }
      await this.pause(wait);
      wait = Math.min(wait * 2, maxRetryMs);
    }
  }

  /** A handler that throws loses its event, not the follower. */
  private dispatch(e: RecordedEvent): void {
    for (const handler of this.handlers.get(e.type) ?? []) {
      try {
        handler(e);
      } catch (err) {
        this.failed(`handler:${e.type}`, err, null);
      }
    }
  }

  private failed(kind: string, err: unknown, retryInMs: number | null): void {
    const notLogged = this.failureLog.take(kind, this.options.clock.now());
    if (notLogged < 0) return;
    const fields = { err, kind, notLoggedSinceLastLine: notLogged, ...(retryInMs === null ? {} : { retryInMs }) };
    this.options.log.warn(fields, kind === 'subscription' ? 'log follower: subscription failed; opening it again' : 'log follower: a handler failed');
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeFromPause = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref(); // a backoff alone does not keep the process alive
      this.wakeFromPause = done;
    });
  }
}
