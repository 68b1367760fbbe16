/**
 * Replay jobs (`WebhookReplayRequested`, recorded by the projector): each reads the
 * log up to its request and queues again every matching event of [from, to) with
 * its original event_id and payload. They run one at a time, behind the projector,
 * resuming from their stored progress after a restart.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import type { EventStore, LogPosition, RecordedEvent } from '../../core/event-store/port.js';
import { comparePositions, positionFromString, positionToString } from '../../core/event-store/port.js';
import { namedId } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { DeliveryIntake, LaneRef } from '../../core/webhook-queue.js';
import { kindsMatching } from '../../core/webhook-kinds.js';
import { evolveDevice, type DeviceRow } from '../devices/evolve.js';
import { webhookMessages } from './payload.js';

export class ReplayJobs {
  private readonly q;
  private replaying: Promise<void> | null = null;
  /** A run was asked for since the running one last read the open replays: it reads them again. */
  private replayWanted = false;
  private replayTimer: NodeJS.Timeout | null = null;
  private stopping = false;

  constructor(
    private readonly db: Database.Database,
    private readonly o: { store: EventStore; clock: Clock; log: Logger; intake: DeliveryIntake },
  ) {
    this.q = {
      endpoint: db.prepare('SELECT * FROM wh_endpoints WHERE webhook_id = ? AND customer_id = ? AND deleted = 0'),
      openReplays: db.prepare('SELECT * FROM wh_replays WHERE done = 0 ORDER BY rowid'),
      replayStarted: db.prepare('UPDATE wh_replays SET started_at = coalesce(started_at, ?) WHERE replay_id = ?'),
      replayQueued: db.prepare('UPDATE wh_replays SET deliveries_queued = deliveries_queued + ? WHERE replay_id = ?'),
      replayDone: db.prepare('UPDATE wh_replays SET progress = ?, done = 1, completed_at = ? WHERE replay_id = ?'),
      insertDelivery: db.prepare(
        `INSERT OR IGNORE INTO wh_deliveries (delivery_id, webhook_id, customer_id, device_id, event_id, kind, occurred_at, body, created_at, replay_id,
           state, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0)`,
      ),
    };
  }

  /** One asked for while a run is under way is taken by that run's next read of the open replays. */
  run(): void {
    if (this.stopping) return;
    this.replayWanted = true;
    if (this.replaying) return;
    this.replaying = this.drainReplays().finally(() => {
      // Cleared here, not inside the body: with no replay open the body ends before the assignment, and
      // a reset made there was overwritten by a settled promise that turned every later run away.
      this.replaying = null;
      if (this.replayWanted) this.run();
    });
  }

  /** Lets the running job stop at its next batch; it stays open, and goes on after the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.replayTimer) clearTimeout(this.replayTimer);
    await this.replaying;
  }

  private async drainReplays(): Promise<void> {
    try {
      while (this.replayWanted && !this.stopping) {
        this.replayWanted = false;
        for (const job of this.q.openReplays.all() as ReplayRow[]) {
          if (this.stopping) return;
          await this.replay(job);
        }
      }
    } catch (err) {
      this.replayWanted = false;
      this.o.log.error({ err }, 'webhook replay failed; retrying in a minute');
      this.replayTimer = setTimeout(() => this.run(), 60_000);
      this.replayTimer.unref();
    }
  }

  /** Devices are evolved from the start of the log, so names and transitions are those of the time. */
  private async replay(job: ReplayRow): Promise<void> {
    const upTo = positionFromString(job.up_to);
    const replayKinds = kindsMatching(job.events ? (JSON.parse(job.events) as string[]) : ['*']);
    const endpoint = this.q.endpoint.get(job.webhook_id, job.customer_id) as { events: string; device_ids: string | null } | undefined;
    if (!endpoint) {
      this.q.replayDone.run(job.progress, this.o.clock.now(), job.replay_id);
      return;
    }
    this.q.replayStarted.run(this.o.clock.now(), job.replay_id);
    const endpointKinds = kindsMatching(JSON.parse(endpoint.events) as string[]);
    const deviceIds = endpoint.device_ids ? new Set(JSON.parse(endpoint.device_ids) as string[]) : null;
    const devices = new Map<string, DeviceRow>();
    let after: LogPosition | undefined;
    for (;;) {
      const batch: RecordedEvent[] = await this.o.store.readAll({ ...(after ? { after } : {}), maxCount: 2000 });
      const inRange = batch.filter((e) => comparePositions(e.position, upTo) <= 0);
      const lanes = new Map<string, LaneRef>();
      let queued = 0;
      this.db.transaction(() => {
        for (const e of inRange) {
          const deviceId = (e.data as { device_id?: string }).device_id;
          const before = deviceId ? (devices.get(deviceId) ?? null) : null;
          const next = deviceId ? evolveDevice(before, e) : null;
          if (deviceId && next) devices.set(deviceId, next);
          for (const m of webhookMessages(e, before, next)) {
            if (m.customer_id !== job.customer_id || m.occurred_at < job.from_ms || m.occurred_at >= job.to_ms) continue;
            if (!replayKinds.has(m.payload.event) || !endpointKinds.has(m.payload.event)) continue;
            if (deviceIds && !deviceIds.has(m.device_id)) continue;
            // Resumed after a crash, a replay inserts nothing for what it queued before (wh_replayed).
            queued += this.q.insertDelivery.run(
              namedId('dlv', e.created, `${job.replay_id}|${m.payload.event_id}|${m.payload.event}`), job.webhook_id, job.customer_id, m.device_id, m.payload.event_id, m.payload.event,
              m.occurred_at, JSON.stringify(m.payload), e.created, job.replay_id,
            ).changes;
            lanes.set(m.device_id, { customer_id: job.customer_id, webhook_id: job.webhook_id, device_id: m.device_id });
          }
        }
        if (queued > 0) this.q.replayQueued.run(queued, job.replay_id);
      }).immediate();
      // Replayed rows sit among the lanes' rows in the database, which memory does not hold.
      if (lanes.size > 0) this.o.intake.untrackLanes([...lanes.values()]);
      after = batch.at(-1)?.position;
      if (inRange.length < batch.length || batch.length === 0) break;
      // Stopping: the rest is queued after the next start (the replay stays open).
      if (this.stopping) return;
    }
    this.q.replayDone.run(after ? positionToString(after) : null, this.o.clock.now(), job.replay_id);
    this.o.intake.wake([job.customer_id]);
  }
}

interface ReplayRow {
  replay_id: string;
  webhook_id: string;
  customer_id: string;
  from_ms: number;
  to_ms: number;
  events: string | null;
  up_to: string;
  progress: string | null;
}
