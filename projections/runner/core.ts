/**
 * The loop every projection runner shares: a catch-up from the stored checkpoint, then a
 * subscription to the log; events applied in batches, each batch's rows, derived events
 * (outbox.ts) and new checkpoint committed in one SQLite transaction, so a crash replays at
 * most an uncommitted batch and never applies an event twice. A failed batch rolls back and
 * the runner catches up again from its checkpoint.
 *
 * How live events become batches is a subclass's: `ProjectionRunner` (gathered.ts) gathers
 * them in memory, `ApplyOnArrivalRunner` (apply-on-arrival.ts) applies each as it arrives.
 */
import type Database from 'better-sqlite3';
import type { EventStore, LogPosition, RecordedEvent, Subscription } from '../../core/event-store/port.js';
import { comparePositions } from '../../core/event-store/port.js';
import type { Logger } from '../../core/logger.js';
import type { EventHandler, Projection } from '../projection.js';
import { checkpointReader, checkpointWriter } from './checkpoint.js';
import type { BatchOptions, SkipTypes } from './options.js';
import { Outbox } from './outbox.js';

/**
 * Events a catch-up applies in one transaction, and the most a live batch holds: a replay or
 * a backlog pays for a commit, and for each row kept in memory for the batch (batch-rows.ts),
 * once per this many events. Not more for live batches gathered in memory: their events wait
 * until the batch is applied, and larger batches outlived the young generation (docs/performance.md).
 */
const BATCH = 4_000;
/**
 * Events a catch-up reads from the log at a time, applied into its batch's open transaction as
 * they come: a whole batch read at once lived until it was applied, and the collector copied
 * and promoted it (docs/performance.md).
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

/** The batch being applied and not committed yet: its transaction is open. `kept`: its events, for `onApplied` listeners, while there are any. */
interface OpenBatch {
  events: number;
  last: LogPosition;
  kept: RecordedEvent[] | null;
}

export abstract class RunnerCore {
  private readonly handlers: EventHandler[];
  protected readonly maxBatch: number;
  private readonly startBatch: number;
  private readonly beforeBatch: ((events: number) => void) | undefined;
  private checkpoint: LogPosition | null;
  private subscription: Subscription | null = null;
  /** The catch-up in progress (or the last one, settled); the next one starts after it. */
  private catchingUp: Promise<void> = Promise.resolve();
  /** A catch-up queued behind the one in progress and not started yet. */
  private nextCatchUp: Promise<void> | null = null;
  protected waiters: Array<{ position: LogPosition; resolve: () => void }> = [];
  private running: Promise<void> | null = null;
  /** How long the last failure waits before following the log again (0: the last batch applied). */
  private retryDelayMs = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly saveCheckpoint: (position: LogPosition) => void;
  private readonly outbox: Outbox;
  protected readonly appliedListeners = new Set<(events: readonly RecordedEvent[]) => void>();
  /** Applies one event inside the caller's transaction (what a batch does per event). */
  private readonly applyEvent: (e: RecordedEvent) => void;
  /**
   * The open batch: a catch-up applies what it reads into it, and so does an `ApplyOnArrivalRunner`
   * what the subscription delivers; a live batch gathered in memory is applied through it at once.
   */
  protected open: OpenBatch | null = null;
  /** Events in the last batch committed: the next one applied on arrival has its page cache sized for as many. */
  protected lastBatchEvents = 0;
  /** A live batch's delayed commit, while one is pending: any commit or failure cancels it, a waiter runs it at once. */
  protected liveTimer: NodeJS.Timeout | null = null;
  private readonly openTransaction: { begin: Database.Statement; commit: Database.Statement; rollback: Database.Statement };

  constructor(
    private readonly store: EventStore,
    readonly db: Database.Database,
    projections: Projection[],
    protected readonly log: Logger,
    sizes: BatchOptions,
    /** What the log is read without; see SkipTypes. */
    private readonly skip: SkipTypes | undefined,
  ) {
    for (const p of projections) p.migrate(db);
    const handlers = projections.map((p) => p.prepare(db));
    this.handlers = handlers;
    this.maxBatch = sizes.maxBatch ?? BATCH;
    this.startBatch = sizes.startBatch ?? this.maxBatch;
    this.beforeBatch = sizes.beforeBatch;
    this.checkpoint = checkpointReader(db)();
    this.saveCheckpoint = checkpointWriter(db);
    this.outbox = new Outbox(db, store, log);
    const derived = this.outbox.insert;
    this.applyEvent = (e) => {
      for (const h of handlers) {
        const raised = h(e);
        if (raised) for (const d of raised) derived.run(d.stream, JSON.stringify(d.event));
      }
    };
    // IMMEDIATE: the write lock first, waiting (busy_timeout) for a checkpointer's RESTART; a deferred
    // transaction that read first would fail at its first write instead.
    this.openTransaction = { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };
  }

  /** Takes a live event the subscription delivered that is not applied yet. A throw fails the batch (see `failed`). */
  protected abstract arrive(e: RecordedEvent): void;

  /** Commits what the live path holds now (its open batch, or the events it gathered): for a waiter, a timer and the stop. */
  protected abstract flush(): void;

  /** Forgets live events gathered and not applied (the log still has them): the subscription that delivered them is closed. */
  protected abstract forgetGathered(): void;

  get position(): LogPosition | null {
    return this.checkpoint;
  }

  /** The last event applied: the open batch's, else the checkpoint's. */
  protected get appliedThrough(): LogPosition | null {
    return this.open?.last ?? this.checkpoint;
  }

  /** Starts following the log; returns once history up to now is applied. */
  async start(): Promise<void> {
    await this.outbox.flush();
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
        return await this.queueCatchUp(this.startBatch);
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
    const sub = this.store.subscribeToAll({ ...(this.checkpoint ? { after: this.checkpoint } : {}), skipTypes: this.skip?.types() });
    this.subscription = sub;
    this.running = (async () => {
      try {
        for await (const e of sub) {
          // A failure replaced (or closed) this subscription: what it still delivers is the next one's.
          if (this.subscription !== sub) break;
          // Events a catch-up already applied (or has in its open batch) may come again through the subscription.
          const through = this.appliedThrough;
          if (through && comparePositions(e.position, through) <= 0) continue;
          this.arrive(e);
        }
      } catch (err) {
        if (this.subscription === sub) this.failed(err);
      }
    })();
  }

  /**
   * A batch failed (rolled back) or the subscription did: what was gathered is dropped (the log
   * still has it), the subscription closed, and the runner catches up from its checkpoint and
   * follows the log again after a delay.
   */
  protected failed(err: unknown): void {
    this.rollbackOpen();
    if (this.stopped || this.retryTimer) return;
    this.retryDelayMs = nextRetryDelayMs(this.retryDelayMs);
    this.log.error({ err, retry_in_ms: this.retryDelayMs }, 'projection batch failed; following the log again from the checkpoint');
    this.cancelLiveTimer();
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
    this.forgetGathered();
    // Closing a broken subscription may fail too; nothing is left to do with it then.
    this.subscription?.close().catch((closeErr: unknown) => this.log.warn({ err: closeErr }, 'closing the subscription failed'));
    this.subscription = null;
  }

  /** Follows the log again from the checkpoint, asking anew which types to skip (a committed batch changed them). */
  protected followAgain(): void {
    if (this.subscription && !this.stopped) {
      this.dropSubscription();
      this.follow();
    }
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
        read = await this.store.readAll({ ...(after ? { after } : {}), maxCount: Math.min(READ_CHUNK, room), skipTypes: this.skip?.types() });
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
        await this.outbox.flush();
      }
    }
  }

  /**
   * Applies events read from the log (or gathered from the subscription) into the open batch,
   * skipping those already applied: the subscription and a catch-up may both deliver an event.
   * Stops after an event that changes the types to skip, and says so: what was read after it
   * was read with the old answer, and is read again. A throw rolls the open batch back.
   */
  protected applyRead(events: readonly RecordedEvent[], expected: number): boolean {
    const changedBy = this.skip?.changedBy;
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

  /**
   * Applies an event in the open batch, beginning one (told to `beforeBatch` as `expected`
   * events) when none is open. A throw leaves the batch open for the caller to roll back.
   */
  protected applyInOpenBatch(e: RecordedEvent, expected: number): void {
    if (!this.open) {
      this.beforeBatch?.(expected);
      this.openTransaction.begin.run();
      this.open = { events: 0, last: e.position, kept: this.appliedListeners.size > 0 ? [] : null };
    }
    this.applyEvent(e);
    this.open.events += 1;
    this.open.last = e.position;
    this.open.kept?.push(e);
  }

  /** Commits the open batch, if there is one: what the projections kept in memory for it, then its checkpoint. */
  protected commitOpen(): void {
    const open = this.open;
    if (!open) return;
    this.cancelLiveTimer();
    try {
      for (const h of this.handlers) h.flush?.();
      this.saveCheckpoint(open.last);
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

  protected cancelLiveTimer(): void {
    if (this.liveTimer) clearTimeout(this.liveTimer);
    this.liveTimer = null;
  }

  /** A flush from a timer: a failure there has no caller to tell. */
  protected flushOrRetry(): void {
    try {
      this.flush();
    } catch (err) {
      this.failed(err);
    }
  }

  /** After a batch committed: its position is the checkpoint, its waiters and listeners are told. */
  private applied(last: LogPosition, batch: readonly RecordedEvent[]): void {
    this.retryDelayMs = 0;
    this.checkpoint = last;
    void this.outbox.flush();
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
    if (this.liveTimer) this.flushOrRetry();
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
    await this.outbox.inFlight;
  }
}

/** SQLITE_BUSY or SQLITE_LOCKED, extended codes included: another connection holds the lock. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
