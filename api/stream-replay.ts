/**
 * A live stream's resume after `Last-Event-ID`: the customer's messages from
 * the client's last id up to the live boundary, found through the stream feed
 * (one index seek per page, whatever the size of the log or of other fleets)
 * and read from their own streams. Bounded twice: a request replays at most
 * REPLAY_LIMIT messages (then a `gap` event says where the REST lists must
 * fill in), and the pages of every replay in this process take turns in one
 * queue, each after pending I/O, so a hundred replays at once delay another
 * request by one page at most.
 */
import PQueue from 'p-queue';
import type Database from 'better-sqlite3';
import type { EventStore, LogPosition, RecordedEvent } from '../core/event-store/port.js';
import { comparePositions } from '../core/event-store/port.js';
import { FEED_COMMAND, FEED_EVENT, FEED_POSITION, feedPointers, type FeedPointer } from './queries/stream-feed.js';

/** Messages read per replay step. */
export const REPLAY_PAGE = 500;
/** Messages one request may replay; beyond, a `gap` event (fill it from GET /v1/positions and GET /v1/events). */
export const REPLAY_LIMIT = 10_000;
/** Revisions apart that one stream read still covers: the other events between them are read and left. */
const RUN_GAP = 16;

export interface ReplayRequest {
  customerId: string;
  wantPositions: boolean;
  wantEvents: boolean;
  wantCommands: boolean;
  after: LogPosition;
  through: LogPosition;
  /** Still wanted: false once the client went away. */
  isOpen(): boolean;
  /** Sends one message; the route filters and formats it. */
  send(event: RecordedEvent): void;
  /** Resolves once the client took what was sent. */
  drained(): Promise<void>;
}

/** The replay ended with the messages up to `through` sent, or cut short at `cutAt` (the last position sent). */
export type ReplayOutcome = { complete: true } | { complete: false; cutAt: LogPosition };

export class StreamReplays {
  /** One step at a time over all replays. */
  private readonly steps = new PQueue({ concurrency: 1 });

  constructor(
    private readonly db: Database.Database,
    private readonly store: EventStore,
  ) {}

  async replay(r: ReplayRequest): Promise<ReplayOutcome> {
    // A kind not wanted is asked as -1, which no row has.
    const kinds: [number, number, number] = [r.wantPositions ? FEED_POSITION : -1, r.wantEvents ? FEED_EVENT : -1, r.wantCommands ? FEED_COMMAND : -1];
    let after = r.after;
    let sent = 0;
    while (r.isOpen()) {
      const limit = Math.min(REPLAY_PAGE, REPLAY_LIMIT - sent);
      if (limit === 0) return { complete: false, cutAt: after };
      const page = await this.steps.add(async () => {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (!r.isOpen()) return [];
        const pointers = feedPointers(this.db, r.customerId, { after, through: r.through }, kinds, limit);
        const events = await this.read(pointers);
        for (const e of events) r.send(e);
        return pointers;
      });
      if (!page || page.length < limit) return { complete: true };
      after = page[page.length - 1]!.position;
      sent += page.length;
      await r.drained();
    }
    return { complete: true };
  }

  /** The events the pointers name, in the pointers' order: one read per run of nearby revisions of a stream. */
  private async read(pointers: readonly FeedPointer[]): Promise<RecordedEvent[]> {
    const byStream = new Map<string, bigint[]>();
    for (const p of pointers) {
      const revisions = byStream.get(p.stream);
      if (revisions) revisions.push(p.revision);
      else byStream.set(p.stream, [p.revision]);
    }
    const found = new Map<string, RecordedEvent>();
    for (const [stream, revisions] of byStream) {
      for (const run of runsOf(revisions)) {
        const events = await this.store.readStream(stream, { fromRevision: run.from, maxCount: Number(run.to - run.from) + 1 });
        for (const e of events) found.set(`${e.revision}@${stream}`, e);
      }
    }
    const events: RecordedEvent[] = [];
    for (const p of pointers) {
      const e = found.get(`${p.revision}@${p.stream}`);
      if (e && comparePositions(e.position, p.position) === 0) events.push(e);
    }
    return events;
  }
}

/** Ascending revisions (a stream's appear in log order) as ranges, split where they lie more than RUN_GAP apart. */
function runsOf(revisions: readonly bigint[]): Array<{ from: bigint; to: bigint }> {
  const runs: Array<{ from: bigint; to: bigint }> = [];
  for (const r of revisions) {
    const last = runs.at(-1);
    if (last && r - last.to <= RUN_GAP) last.to = r;
    else runs.push({ from: r, to: r });
  }
  return runs;
}
