/**
 * The scheduler on a hand-moved clock, with the queue held in memory: no sockets, no SQLite.
 * A small driver plays the dispatcher's part: it plans, "sends" what starts, and settles the
 * outcomes as the recorder would write them (a success leaves the queue, a failure is retried on
 * the schedule of retry-schedule.ts).
 */
import { describe, expect, it } from 'vitest';
import type { LaneRef, QueuedDelivery } from '../../core/webhook-queue.js';
import { LANE_HOLDING_ATTEMPTS, LaneQueues, laneKey, type DueRow, type Lane, type LaneReads } from '../../webhook-delivery/lanes.js';
import { RETRY_SCHEDULE_MS, nextAttemptDelayMs } from '../../webhook-delivery/retry-schedule.js';
import { Scheduler } from '../../webhook-delivery/scheduler.js';

const endpoint = { url: 'https://hooks.example.com/x', secret: 'sealed', previous_secret: null, previous_valid_until: null, enabled: true };

/** The pending rows of wh_deliveries, as LaneReads answers from them. */
class MemoryQueue implements LaneReads {
  readonly pending: QueuedDelivery[] = [];
  private seq = 0;

  constructor(private readonly customerOf: (webhookId: string) => string) {}

  add(customerId: string, webhookId: string, deviceId: string): QueuedDelivery {
    const seq = ++this.seq;
    const row: QueuedDelivery = {
      seq, delivery_id: `dlv_${seq}`, webhook_id: webhookId, customer_id: customerId, device_id: deviceId,
      event_id: `evt_${seq}`, kind: 'position.updated', attempts: 0, next_attempt_at: 0, body: '{}',
    };
    this.pending.push(row);
    return row;
  }

  rowsAfter(l: Lane, afterSeq: number, limit: number): QueuedDelivery[] {
    return this.pending.filter((r) => r.webhook_id === l.webhook_id && r.device_id === l.device_id && r.seq > afterSeq).slice(0, limit).map((r) => ({ ...r }));
  }

  lanesOf(customerId: string): Lane[] {
    return this.lanes().filter((l) => this.customerOf(l.webhook_id) === customerId);
  }

  pendingLanes(): LaneRef[] {
    return this.lanes();
  }

  private lanes(): LaneRef[] {
    const seen = new Map<string, LaneRef>();
    for (const r of this.pending) seen.set(laneKey(r.webhook_id, r.device_id), { customer_id: r.customer_id, webhook_id: r.webhook_id, device_id: r.device_id });
    return [...seen.values()];
  }
}

interface Sent {
  at: number;
  row: DueRow;
}

/** A scheduler over a memory queue, with a driver that plans and settles as the dispatcher does. */
function harness(rates: Record<string, number>) {
  const customerOfEndpoint = new Map<string, string>();
  const queue = new MemoryQueue((webhookId) => customerOfEndpoint.get(webhookId)!);
  const scheduler = new Scheduler({
    lanes: new LaneQueues(queue, { get: () => endpoint }),
    endpoints: { get: () => endpoint },
    rateOf: (c) => rates[c]!,
  });
  const sent: Sent[] = [];
  let now = 1_000_000;

  return {
    queue,
    scheduler,
    sent,
    now: () => now,
    /** Rows queued in the database only (as after a restart or a replay): the scheduler reads them. */
    queued(customerId: string, webhookId: string, deviceIds: string[], perDevice: number): void {
      customerOfEndpoint.set(webhookId, customerId);
      for (let i = 0; i < perDevice; i++) for (const d of deviceIds) queue.add(customerId, webhookId, d);
      scheduler.untrackLanes(queue.pendingLanes(), now);
    },
    /** Rows the projector just committed and hands over in memory. */
    handedOver(customerId: string, webhookId: string, deviceIds: string[], perDevice: number): void {
      customerOfEndpoint.set(webhookId, customerId);
      const rows: QueuedDelivery[] = [];
      for (let i = 0; i < perDevice; i++) for (const d of deviceIds) rows.push({ ...queue.add(customerId, webhookId, d) });
      scheduler.accept({ customers: new Set([customerId]), rates: new Set(), rows, untrack: [] }, now);
      scheduler.wake([customerId], new Set(), now);
    },
    /** One turn of the dispatcher's tick: every customer is looked at; what starts is recorded as sent. */
    plan(): { started: DueRow[]; wakeAt: number } {
      scheduler.tick();
      const { starts, wakeAt } = scheduler.plan(now);
      for (const s of starts) sent.push({ at: now, row: s.row });
      return { started: starts.map((s) => s.row), wakeAt };
    },
    /** The attempt's outcome is committed: as the recorder writes it, then as the dispatcher tells the scheduler. */
    settle(row: DueRow, ok: boolean): void {
      scheduler.chainEnded(row.customer_id);
      const i = queue.pending.findIndex((r) => r.delivery_id === row.delivery_id);
      if (ok) queue.pending.splice(i, 1);
      else {
        const attempts = row.attempts + 1;
        queue.pending[i] = { ...queue.pending[i]!, attempts, next_attempt_at: now + nextAttemptDelayMs(attempts, () => 0.5)! };
      }
      scheduler.settled(row, ok);
    },
    advance(ms: number): void {
      now += ms;
    },
  };
}

describe('scheduler', () => {
  it.each(['handedOver', 'queued'] as const)('sends each lane in queue order, one at a time, lanes side by side (rows %s)', (how) => {
    const h = harness({ cus_a: 100 });
    h[how]('cus_a', 'whk_1', ['dev_1', 'dev_2', 'dev_3'], 5);
    for (let turn = 0; turn < 10; turn++) {
      const { started } = h.plan();
      // A lane's next delivery starts only once the one in flight is settled.
      const lanes = started.map((r) => laneKey(r.webhook_id, r.device_id));
      expect(new Set(lanes).size).toBe(lanes.length);
      h.advance(10);
      for (const r of started) h.settle(r, true);
    }
    for (const device of ['dev_1', 'dev_2', 'dev_3']) {
      const seqs = h.sent.filter((s) => s.row.device_id === device).map((s) => s.row.seq);
      expect(seqs).toHaveLength(5);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    expect(h.sent.slice(0, 3).map((s) => s.row.device_id).sort()).toEqual(['dev_1', 'dev_2', 'dev_3']);
    expect(h.queue.pending).toHaveLength(0);
  });

  it('holds a customer to its plan per second in every second, without dropping any', () => {
    const h = harness({ cus_free: 10 });
    h.queued('cus_free', 'whk_1', Array.from({ length: 45 }, (_, i) => `dev_${i}`), 1);
    const start = h.now();
    for (let t = 0; t < 5_000; t += 10) {
      for (const r of h.plan().started) h.settle(r, true);
      h.advance(10);
    }
    const times = h.sent.map((s) => s.at - start);
    for (const from of times) expect(times.filter((t) => t >= from && t < from + 1000).length).toBeLessThanOrEqual(10);
    // At its rate the whole time: about ten a second, the first second's worth at once up to a quarter of it.
    expect(times.filter((t) => t < 4_000).length).toBeGreaterThanOrEqual(39);
    expect(h.sent).toHaveLength(45);
    expect(h.queue.pending).toHaveLength(0);
  });

  it('starts another customer at once while one customer has every slot taken by a receiver that never answers', () => {
    const h = harness({ cus_slow: 100, cus_ok: 10 });
    h.queued('cus_slow', 'whk_slow', Array.from({ length: 600 }, (_, i) => `dev_${i}`), 1);
    // The slow customer's requests never settle: it fills all its slots.
    for (let t = 0; t < 3_000; t += 50) {
      h.plan();
      h.advance(50);
    }
    const slowStarted = h.sent.length;
    expect(slowStarted).toBe(200);
    h.handedOver('cus_ok', 'whk_ok', ['dev_a', 'dev_b', 'dev_c'], 1);
    const { started } = h.plan();
    expect(started.map((r) => r.customer_id)).toEqual(['cus_ok', 'cus_ok', 'cus_ok']);
    for (const r of started) h.settle(r, true);
    expect(h.queue.pending.filter((r) => r.customer_id === 'cus_ok')).toHaveLength(0);
  });

  it('retries on the schedule, holding the lane, and passes a delivery over once it failed the holding limit', () => {
    const h = harness({ cus_a: 100 });
    h.handedOver('cus_a', 'whk_1', ['dev_1'], 2);
    const [first] = h.plan().started;
    expect(first!.seq).toBe(1);
    let row = first!;
    for (let attempt = 1; attempt < LANE_HOLDING_ATTEMPTS; attempt++) {
      h.settle(row, false);
      const retryAt = h.now() + RETRY_SCHEDULE_MS[attempt - 1]!;
      // Held: nothing of the lane goes before the retry, and the scheduler says when it is due.
      const waiting = h.plan();
      expect(waiting.started).toEqual([]);
      expect(waiting.wakeAt).toBe(retryAt);
      h.advance(retryAt - h.now() - 1);
      expect(h.plan().started).toEqual([]);
      h.advance(1);
      const retried = h.plan().started;
      expect(retried.map((r) => [r.seq, r.attempts])).toEqual([[1, attempt]]);
      row = retried[0]!;
    }
    // The holding limit of failures: the lane's next delivery goes at once, the failed one at its retry.
    h.settle(row, false);
    const retryAt = h.now() + RETRY_SCHEDULE_MS[LANE_HOLDING_ATTEMPTS - 1]!;
    const passed = h.plan().started;
    expect(passed.map((r) => r.seq)).toEqual([2]);
    h.settle(passed[0]!, true);
    expect(h.plan().wakeAt).toBe(retryAt);
    h.advance(retryAt - h.now());
    expect(h.plan().started.map((r) => [r.seq, r.attempts])).toEqual([[1, LANE_HOLDING_ATTEMPTS]]);
  });

  it('goes on along a lane in the same chain after a success, while the customer has allowance', () => {
    const h = harness({ cus_a: 100 });
    h.queued('cus_a', 'whk_1', ['dev_1'], 4);
    const [first] = h.plan().started;
    const ahead: QueuedDelivery[] = [];
    const chain = [first!];
    for (let next = h.scheduler.nextInLane(first!, ahead, h.now()); next; next = h.scheduler.nextInLane(next, ahead, h.now())) chain.push(next);
    expect(chain.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });
});
