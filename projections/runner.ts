/**
 * Runs projections behind the log: a catch-up subscription from the stored
 * checkpoint, events applied in batches, each batch's rows and the new
 * checkpoint committed in one SQLite transaction, so a crash replays at most
 * an uncommitted batch and never applies an event twice.
 *
 * Derived events (detectors) go to an outbox table in that same transaction
 * and are appended to the store after the commit; a crash in between leaves
 * them in the outbox for the next start. Their ids are deterministic, so an
 * append that did happen before a crash is not duplicated.
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { EventStore, LogPosition, RecordedEvent, Subscription } from '../core/event-store/port.js';
import { comparePositions, positionFromString, positionToString } from '../core/event-store/port.js';
import type { Logger } from '../core/logger.js';
import { openPrivateSqlite } from '../core/private-files.js';
import type { DerivedEvent, EventHandler, Projection } from './projection.js';

/**
 * Events a catch-up applies in one transaction, and the most the live subscription
 * gathers into one: a replay or a backlog pays for a commit, and for each row kept in
 * memory for the batch (batch-rows.ts), once per this many events. Not more for live
 * batches: their events wait in memory until the batch is applied, and 10,000 of them
 * outlived the young generation, so the collector copied and promoted them (the rebuild
 * bench: 74-79k events/s at 10,000, 86-91k at 1,000-4,000).
 */
const BATCH = 4_000;
/**
 * Events a catch-up reads from the log at a time, applied into its batch's open transaction
 * as they come: a batch of 16,000 read at once lived until it was applied, and the collector
 * copied and promoted it (the rebuild bench: 40,000-41,000 events/s, V8's helper threads using
 * 10 µs of CPU per event, against 51,000-55,000 events/s and 3.5 µs read by the thousand).
 */
const READ_CHUNK = 1_000;
/**
 * A batch that failed (SQLite busy past its timeout under a checkpoint, a full disk) is tried
 * again from the checkpoint after this long, doubling while it keeps failing up to RETRY_MAX_MS:
 * the read models fall behind and catch up, instead of stopping for good until a restart.
 */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 10_000;
/** The wait before the next try, after waiting `previousMs` before this one (0: none yet). */
const nextRetryDelayMs = (previousMs: number): number => (previousMs === 0 ? RETRY_FIRST_MS : Math.min(RETRY_MAX_MS, previousMs * 2));
const CHECKPOINT = 'read-models';

/**
 * Bump when a projection derives something else from the same log (a new
 * rule, a fixed bug): read models built by another version are dropped when
 * opened and rebuilt from the log, so no row of the old logic survives.
 * 2: future-dated fixes no longer count (projections/usable-fix.ts).
 * 3: implausible fixes (core/fix-plausibility.ts) are in no read model, history included.
 * 4: webhook endpoints read model (built from the whole log, like any new table).
 * 5: panel users and sessions read model.
 * 6: the live stream's feed by customer and log position.
 */
export const READ_MODEL_VERSION = 6;

/** Where the read models (all but the history and webhook delivery) keep their database in a data dir. */
export const readModelsDbPath = (dataDir: string): string => join(dataDir, 'readmodels.sqlite');

export function openReadModelDb(path: string): Database.Database {
  const db = openPrivateSqlite(path);
  // The log is the source of truth: a lost read-model commit is replayed from the checkpoint.
  db.pragma('synchronous = NORMAL');
  // A rebuild writes hundreds of thousands of rows: their index pages stay in memory (64 MB) between batches
  // instead of being read back from the file. Without a checkpointer thread (core/wal-checkpointer.ts, as the
  // platform runs it), the WAL is folded back into the file (the only fsync with synchronous NORMAL) every 40 MB
  // rather than every 4 MB.
  db.pragma('cache_size = -65536');
  db.pragma('temp_store = MEMORY');
  db.pragma('wal_autocheckpoint = 10000');
  if (db.pragma('user_version', { simple: true }) !== READ_MODEL_VERSION) dropEverything(db);
  db.exec(`
    CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, stream TEXT NOT NULL, event TEXT NOT NULL);`);
  return db;
}

/** Reads the position a runner's read models were committed up to, as stored beside them (null: none applied yet). */
export function checkpointReader(db: Database.Database): () => LogPosition | null {
  const read = db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck();
  return () => {
    const position = read.get(CHECKPOINT) as string | undefined;
    return position === undefined ? null : positionFromString(position);
  };
}

/** Read models of another version: every table goes (the outbox too: its events are derived again on the replay). */
function dropEverything(db: Database.Database): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  db.transaction(() => {
    for (const t of tables) db.exec(`DROP TABLE "${t}"`);
    db.pragma(`user_version = ${READ_MODEL_VERSION}`);
  })();
}

export interface RunnerOptions {
  /** Events applied in one transaction at most (BATCH by default); a thread that also does other work keeps its turns short with fewer. */
  maxBatch?: number;
  /**
   * Live events are committed together this long after the first of them (0, the default: a
   * turn of the event loop after the last of them); they wait in memory meanwhile, or with
   * `applyOnArrival` are applied at once. For read models nobody follows live (the position
   * history): under a steady trickle of fixes the runner commits a few times a second instead
   * of at every commit notice. `waitFor` does not wait for it.
   */
  liveDelayMs?: number;
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
  /**
   * Event types the projections ignore for now: the log is read without them (SkipTypes).
   * Webhook delivery skips fixes while no endpoint takes them, and so neither reads nor
   * parses most of the log.
   */
  skip?: SkipTypes;
  /**
   * Live events are applied as they arrive, into a transaction left open until the batch
   * commits (after `liveDelayMs`, at `maxBatch` events, or for a waiter), instead of waiting
   * in memory for the batch: a parsed event then dies young. For the position history,
   * whose fixes waited up to 250 ms and so outlived the young generation: its thread
   * promoted about 240 MB per 10 s of the closed-loop bench. Not with `skip`, and a runner
   * in this mode tells its `onApplied` listeners nothing of the events (it keeps none).
   */
  applyOnArrival?: boolean;
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

export class ProjectionRunner {
  private readonly handlers: EventHandler[];
  private readonly maxBatch: number;
  private checkpoint: LogPosition | null;
  private subscription: Subscription | null = null;
  private buffer: RecordedEvent[] = [];
  private flushScheduled = false;
  /** The delayed flush of a runner with `liveDelayMs`, while one is pending. */
  private delayedFlush: NodeJS.Timeout | null = null;
  /** An event arrived since the scheduled flush last looked: the subscription is still delivering. */
  private arrived = false;
  /** The catch-up in progress (or the last one, settled); the next one starts after it. */
  private catchingUp: Promise<void> = Promise.resolve();
  /** A catch-up queued behind the one in progress and not started yet. */
  private nextCatchUp: Promise<void> | null = null;
  private waiters: Array<{ position: LogPosition; resolve: () => void }> = [];
  private running: Promise<void> | null = null;
  /** How long the last failure waits before following the log again (0: the last batch applied). */
  private retryDelayMs = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly saveCheckpoint: Database.Statement;
  private readonly outbox: { insert: Database.Statement; pending: Database.Statement; remove: Database.Statement };
  private outboxFlushing: Promise<void> | null = null;
  private readonly appliedListeners = new Set<(events: readonly RecordedEvent[]) => void>();
  /** Applies one event inside the caller's transaction (what a batch does per event). */
  private readonly applyEvent: (e: RecordedEvent) => void;
  /**
   * The batch being applied and not committed yet: its transaction is open. A catch-up applies
   * what it reads into it, and so does a runner with `applyOnArrival` what the subscription
   * delivers; a live batch gathered in memory is applied through it at once. `kept`: its events,
   * for the `onApplied` listeners, while there are any.
   */
  private open: { events: number; last: LogPosition; kept: RecordedEvent[] | null } | null = null;
  /** Events in the last batch committed: the next one applied on arrival has its page cache sized for as many. */
  private lastBatchEvents = 0;
  private readonly openTransaction: { begin: Database.Statement; commit: Database.Statement; rollback: Database.Statement };

  constructor(
    private readonly store: EventStore,
    readonly db: Database.Database,
    projections: Projection[],
    private readonly log: Logger,
    private readonly options: RunnerOptions = {},
  ) {
    for (const p of projections) p.migrate(db);
    this.handlers = projections.map((p) => p.prepare(db));
    this.maxBatch = options.maxBatch ?? BATCH;
    this.checkpoint = checkpointReader(db)();
    this.saveCheckpoint = db.prepare(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    );
    this.outbox = {
      insert: db.prepare('INSERT INTO outbox (stream, event) VALUES (?, ?)'),
      pending: db.prepare('SELECT seq, stream, event FROM outbox ORDER BY seq LIMIT 500'),
      remove: db.prepare('DELETE FROM outbox WHERE seq <= ?'),
    };
    if (options.applyOnArrival && options.skip) throw new Error('a runner that applies events on arrival cannot skip types');
    this.applyEvent = (e) => {
      for (const h of this.handlers) {
        const derived = h(e);
        if (derived) for (const d of derived) this.outbox.insert.run(d.stream, JSON.stringify(d.event));
      }
    };
    // IMMEDIATE: the write lock first, waiting (busy_timeout) for a checkpointer's RESTART; a deferred
    // transaction that read first would fail at its first write instead.
    this.openTransaction = { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };
  }

  /** What the projections kept in memory for the batch, written with the checkpoint that covers it (inside its transaction). */
  private endBatch(last: LogPosition): void {
    for (const h of this.handlers) h.flush?.();
    this.saveCheckpoint.run(CHECKPOINT, positionToString(last));
  }

  /** The last event applied: the open batch's, else the checkpoint's. */
  private get appliedThrough(): LogPosition | null {
    return this.open?.last ?? this.checkpoint;
  }

  /**
   * Applies an event in the open batch, beginning one (told to `beforeBatch` as `expected`
   * events) when none is open. A throw leaves the batch open for the caller to roll back.
   */
  private applyInOpenBatch(e: RecordedEvent, expected: number): void {
    if (!this.open) {
      this.options.beforeBatch?.(expected);
      this.openTransaction.begin.run();
      this.open = { events: 0, last: e.position, kept: this.appliedListeners.size > 0 ? [] : null };
    }
    this.applyEvent(e);
    this.open.events += 1;
    this.open.last = e.position;
    this.open.kept?.push(e);
  }

  /** Applies a live event at once, in the open batch's transaction (begun by the batch's first event). */
  private applyArrived(e: RecordedEvent): void {
    try {
      const opening = !this.open;
      this.applyInOpenBatch(e, this.lastBatchEvents);
      if (opening) this.delayedFlush = setTimeout(() => this.flushOrRetry(), this.options.liveDelayMs ?? 0).unref();
    } catch (err) {
      this.failed(err);
      return;
    }
    if (this.open!.events >= this.maxBatch || this.waiters.length > 0) this.flushOrRetry();
  }

  /** Commits the open batch, if there is one. */
  private commitOpen(): void {
    const open = this.open;
    if (!open) return;
    if (this.delayedFlush) clearTimeout(this.delayedFlush);
    this.delayedFlush = null;
    try {
      this.endBatch(open.last);
      this.openTransaction.commit.run();
    } catch (err) {
      this.rollbackOpen();
      throw err;
    }
    this.open = null;
    this.lastBatchEvents = open.events;
    this.applied(open.last, open.kept ?? []);
  }

  /** Drops the open batch (the log still has its events). */
  private rollbackOpen(): void {
    if (!this.open) return;
    this.open = null;
    if (this.db.inTransaction) this.openTransaction.rollback.run();
    for (const h of this.handlers) h.discard?.();
  }

  /**
   * Appends outbox events to the store, removing each read of them once all are appended.
   * Each stream's events go in one append, in the order they were raised, and the appends
   * of one read go out together: the store commits them in one transaction. Appended one
   * after another, each waited for a commit (an fsync) of its own: a rebuild whose
   * detectors raised an event every 20 s per device ran at 25,000-26,000 events/s, and
   * at 43,000-44,000 with them together. Across streams the log may order them otherwise
   * than they were raised; nothing reads derived events in an order across devices.
   */
  private flushOutbox(): Promise<void> {
    this.outboxFlushing ??= (async () => {
      try {
        for (;;) {
          const rows = this.outbox.pending.all() as Array<{ seq: number; stream: string; event: string }>;
          if (rows.length === 0) return;
          const byStream = new Map<string, DerivedEvent['event'][]>();
          for (const row of rows) {
            let events = byStream.get(row.stream);
            if (!events) byStream.set(row.stream, (events = []));
            events.push(JSON.parse(row.event) as DerivedEvent['event']);
          }
          // Settled, not raced: a retry starts once none of this read's appends is still in flight.
          const outcomes = await Promise.allSettled([...byStream].map(([stream, events]) => this.store.appendToStream(stream, events)));
          const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
          if (failed) throw failed.reason;
          this.outbox.remove.run(rows[rows.length - 1]!.seq);
        }
      } catch (err) {
        this.log.error({ err }, 'outbox append failed; retrying on the next batch');
      }
    })().finally(() => {
      // Cleared here, not inside the body: with an empty outbox the body ends before `??=` assigns,
      // and a reset made there would be overwritten, leaving a settled promise that blocks every later flush.
      this.outboxFlushing = null;
    });
    return this.outboxFlushing;
  }

  get position(): LogPosition | null {
    return this.checkpoint;
  }

  /** Starts following the log; returns once history up to now is applied. */
  async start(): Promise<void> {
    await this.flushOutbox();
    await this.catchUpAtStart();
    if (!this.stopped) this.follow();
  }

  /**
   * A database found busy past its timeout (a long checkpoint, a backup or an operator's
   * session holding the write lock) is waited out, with the live path's delays; any other
   * failure (a full disk, a damaged file) fails the start, so the process stops with it.
   */
  private async catchUpAtStart(): Promise<void> {
    for (let delayMs = nextRetryDelayMs(0); ; delayMs = nextRetryDelayMs(delayMs)) {
      try {
        return await this.queueCatchUp(this.options.startBatch ?? this.maxBatch);
      } catch (err) {
        if (!isBusy(err) || this.stopped) throw err;
        this.log.warn({ err, retry_in_ms: delayMs }, 'the read-model database is busy at start; catching up again');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (this.stopped) return;
      }
    }
  }

  /** Applies what the log receives after the checkpoint, as it arrives. */
  private follow(): void {
    const sub = this.store.subscribeToAll({ ...(this.checkpoint ? { after: this.checkpoint } : {}), skipTypes: this.options.skip?.types() });
    this.subscription = sub;
    this.running = (async () => {
      try {
        for await (const e of sub) {
          // A failure replaced (or closed) this subscription: what it still delivers is the next one's.
          if (this.subscription !== sub) break;
          this.push(e);
        }
      } catch (err) {
        if (this.subscription === sub) this.failed(err);
      }
    })();
  }

  /**
   * A batch failed (rolled back) or the subscription did: what was buffered is dropped (the log
   * still has it), the subscription closed, and the runner catches up from its checkpoint and
   * follows the log again after a delay.
   */
  private failed(err: unknown): void {
    this.rollbackOpen();
    if (this.stopped || this.retryTimer) return;
    this.retryDelayMs = nextRetryDelayMs(this.retryDelayMs);
    this.log.error({ err, retry_in_ms: this.retryDelayMs }, 'projection batch failed; following the log again from the checkpoint');
    if (this.delayedFlush) clearTimeout(this.delayedFlush);
    this.delayedFlush = null;
    this.dropSubscription();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.catchUp().then(
        () => {
          if (!this.stopped) this.follow();
        },
        (e: unknown) => this.failed(e),
      );
    }, this.retryDelayMs);
  }

  /** Closes the subscription and forgets what it delivered and was not applied (the log still has it). */
  private dropSubscription(): void {
    this.buffer = [];
    // Closing a broken subscription may fail too; nothing is left to do with it then.
    this.subscription?.close().catch((closeErr: unknown) => this.log.warn({ err: closeErr }, 'closing the subscription failed'));
    this.subscription = null;
  }

  /**
   * Applies everything the store holds now (also used on an auth miss right
   * after a key was created). Calls run one after another: two reads from the
   * same checkpoint would otherwise both apply what they read. Callers that
   * arrive while one waits to start share it (it reads all they need), so a
   * burst of unknown credentials costs one catch-up, not one each.
   */
  catchUp(): Promise<void> {
    return this.queueCatchUp(this.maxBatch);
  }

  private queueCatchUp(batchSize: number): Promise<void> {
    if (this.nextCatchUp) return this.nextCatchUp;
    const run = this.catchingUp.then(() => {
      this.nextCatchUp = null;
      return this.catchUpNow(batchSize);
    });
    this.nextCatchUp = run;
    this.catchingUp = run.catch(() => undefined);
    return run;
  }

  /**
   * Reads the log READ_CHUNK events at a time into the open batch, committed every `batchSize`
   * events and at the log's end. Live batches may commit it meanwhile (a flush commits what is
   * open), and events the subscription already applied are skipped. A stop ends it after its read.
   */
  private async catchUpNow(batchSize: number): Promise<void> {
    for (;;) {
      let read: RecordedEvent[];
      try {
        const after = this.appliedThrough;
        const room = Math.max(1, batchSize - (this.open?.events ?? 0));
        read = await this.store.readAll({ ...(after ? { after } : {}), maxCount: Math.min(READ_CHUNK, room), skipTypes: this.options.skip?.types() });
      } catch (err) {
        this.rollbackOpen();
        throw err;
      }
      if (this.stopped) return;
      // Only an empty read with nothing left to commit ends it: a store may return fewer than asked
      // before the log's end, and the outbox appends after a commit are read too.
      if (read.length === 0 && !this.open) return;
      const skipChanged = this.applyRead(read, batchSize);
      if (read.length === 0 || skipChanged || (this.open?.events ?? 0) >= batchSize) {
        this.commitOpen();
        if (skipChanged) this.followAgain();
        await this.flushOutbox();
      }
    }
  }

  private push(e: RecordedEvent): void {
    // Events a catch-up already applied (or has in its open batch) may come again through the subscription.
    const through = this.appliedThrough;
    if (through && comparePositions(e.position, through) <= 0) return;
    if (this.options.applyOnArrival) {
      this.applyArrived(e);
      return;
    }
    this.buffer.push(e);
    this.arrived = true;
    if (this.buffer.length >= this.maxBatch) this.flush();
    else if (this.options.liveDelayMs) {
      // Someone waits for an event: no delay for them (read-your-writes).
      if (this.waiters.length > 0) this.flush();
      else this.delayedFlush ??= setTimeout(() => this.flushOrRetry(), this.options.liveDelayMs).unref();
    } else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushWhenQuiet());
    }
  }

  /**
   * Applies the buffer once a turn of the event loop brought no new event: a subscription
   * working through a backlog (it reads a thousand events a turn) fills batches of up to
   * BATCH events, while a quiet one is applied a turn after its last event.
   */
  private flushWhenQuiet(): void {
    if (this.arrived && this.buffer.length > 0) {
      this.arrived = false;
      setImmediate(() => this.flushWhenQuiet());
      return;
    }
    this.flushScheduled = false;
    this.flushOrRetry();
  }

  /** A flush from a timer: a failure there has no caller to tell. */
  private flushOrRetry(): void {
    try {
      this.flush();
    } catch (err) {
      this.failed(err);
    }
  }

  private flush(): void {
    if (this.delayedFlush) clearTimeout(this.delayedFlush);
    this.delayedFlush = null;
    this.arrived = false;
    const batch = this.buffer;
    this.buffer = [];
    this.apply(batch);
  }

  /** Applies a live batch gathered in memory in a transaction of its own, after committing what was open. */
  private apply(events: RecordedEvent[]): void {
    this.commitOpen();
    const skipChanged = this.applyRead(events, events.length);
    this.commitOpen();
    if (skipChanged) this.followAgain();
  }

  /**
   * Applies events read from the log (or delivered by the subscription) into the open batch,
   * skipping those already applied: the subscription and a catch-up may both deliver an event.
   * Stops after an event that changes the types to skip, and says so: what was read after it
   * was read with the old answer, and is read again. A throw rolls the open batch back.
   */
  private applyRead(events: readonly RecordedEvent[], expected: number): boolean {
    const changedBy = this.options.skip?.changedBy;
    try {
      for (const e of events) {
        const through = this.appliedThrough;
        if (through && comparePositions(e.position, through) <= 0) continue;
        this.applyInOpenBatch(e, expected);
        if (changedBy?.has(e.type)) return true;
      }
      return false;
    } catch (err) {
      this.rollbackOpen();
      throw err;
    }
  }

  /** Follows the log again from the checkpoint, asking anew which types to skip (a committed batch changed them). */
  private followAgain(): void {
    if (this.subscription && !this.stopped) {
      this.dropSubscription();
      this.follow();
    }
  }

  /** After a batch committed: its position is the checkpoint, its waiters and listeners are told. */
  private applied(last: LogPosition, batch: readonly RecordedEvent[]): void {
    this.retryDelayMs = 0;
    this.checkpoint = last;
    void this.flushOutbox();
    if (batch.length > 0) this.notifyApplied(batch);
    if (this.waiters.length > 0) {
      const cp = this.checkpoint;
      this.waiters = this.waiters.filter((w) => {
        if (comparePositions(w.position, cp) <= 0) {
          w.resolve();
          return false;
        }
        return true;
      });
    }
  }

  /**
   * Calls `listener` after each committed batch with its events (live feeds
   * such as the API's event stream); the read models already include them.
   * Returns the unsubscribe function.
   */
  onApplied(listener: (events: readonly RecordedEvent[]) => void): () => void {
    if (this.options.applyOnArrival) throw new Error('a runner that applies events on arrival keeps none to tell');
    this.appliedListeners.add(listener);
    return () => this.appliedListeners.delete(listener);
  }

  private notifyApplied(batch: readonly RecordedEvent[]): void {
    for (const listener of this.appliedListeners) {
      try {
        listener(batch);
      } catch (err) {
        // A failing listener must not stop the projections.
        this.log.error({ err }, 'onApplied listener failed');
      }
    }
  }

  /** Resolves once the read models include the event at `position` (read-your-writes for the API). */
  waitFor(position: LogPosition, timeoutMs = 5_000): Promise<void> {
    // A delayed batch is applied at once for a waiter: the delay saves wake-ups, never a reader's time.
    if (this.delayedFlush) this.flushOrRetry();
    if (this.checkpoint && comparePositions(position, this.checkpoint) <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('read models did not catch up in time')), timeoutMs);
      this.waiters.push({
        position,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.subscription?.close();
    await this.running;
    this.flush();
    await this.outboxFlushing;
  }
}

/** SQLITE_BUSY or SQLITE_LOCKED, extended codes included: another connection holds the lock. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
