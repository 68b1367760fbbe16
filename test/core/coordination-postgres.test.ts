/**
 * What nodes on one PostgreSQL share (core/coordination), against a real server: token buckets no
 * two nodes can overdraw, leases no two nodes hold at once and that lapse for the others, and
 * delivery outcomes read in the order they were written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresCoordination, type PostgresCoordination } from '../../core/coordination/postgres.js';
import type { SharedOutcome } from '../../core/coordination/port.js';
import { SharedBudgets } from '../../api/shared-rate-limit.js';
import { createLogger } from '../../core/logger.js';
import { type PostgresServer, startPostgresServer } from '../support/postgres-server.js';

let server: PostgresServer;
let a: PostgresCoordination;
let b: PostgresCoordination;

beforeAll(async () => {
  server = await startPostgresServer();
  await server.createDatabase('coord');
  [a, b] = await Promise.all([openPostgresCoordination(server.url('coord')), openPostgresCoordination(server.url('coord'))]);
}, 120_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await server?.stop();
}, 60_000);

const outcome = (id: string, attempts: number, state: SharedOutcome['state']): SharedOutcome => ({
  delivery_id: id, customer_id: 'cus_1', webhook_id: 'whk_1', attempts, state, next_attempt_at: state === 'pending' ? 1000 : null,
  last_attempt_at: attempts * 10, last_status: state === 'delivered' ? 200 : 500, last_error: null, last_latency_ms: 3, last_response_start: 'ok',
});

describe('shared token buckets', () => {
  it('never grant two nodes together more than the bucket holds', async () => {
    // No refill to speak of: 1 a minute.
    const limits = { capacity: 50, perMinute: 1 };
    const takes = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).takeTokens('api|cus_x', limits, 1)));
    expect(takes.reduce((n, t) => n + t.granted, 0)).toBe(50);
    expect(takes.filter((t) => t.granted === 0)).toHaveLength(30);
  });

  it('hold a customer to its plan across two API nodes, refusing locally until a token is due', async () => {
    const limits = { capacity: 30, perMinute: 6 };
    const nodes = [new SharedBudgets(a, createLogger('silent')), new SharedBudgets(b, createLogger('silent'))];
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => nodes[i % 2]!.take('cus_y', limits, Date.now())));
    const granted = results.filter((r) => r.allowed).length;
    // 30 at once, and at most one more refilled while the test ran (6 a minute).
    expect(granted).toBeGreaterThanOrEqual(30);
    expect(granted).toBeLessThanOrEqual(31);
    const refused = results.find((r) => !r.allowed)!;
    expect(refused.retryAfterS).toBeGreaterThanOrEqual(1);
  });
});

describe('leases', () => {
  it('are held by one node at a time and split between live nodes', async () => {
    const names = ['c1', 'c2', 'c3', 'c4'];
    const first = await a.leaseRound('t1', 'node-a', [], names, 60_000);
    expect(first.held.sort()).toEqual(names);
    // b joins: a's share is now 2, but a holds them all until it lets some lapse.
    const joined = await b.leaseRound('t1', 'node-b', [], names, 60_000);
    expect(joined).toEqual({ held: [], liveNodes: 2 });
    // a keeps two (renewing only those); the others stay a's until they lapse.
    const kept = await a.leaseRound('t1', 'node-a', ['c1', 'c2'], names, 60_000);
    expect(kept.held.sort()).toEqual(['c1', 'c2']);
    expect((await b.leaseRound('t1', 'node-b', [], names, 60_000)).held).toEqual([]);
  });

  it('lapse after their time for another node to take, and a clean release hands them over at once', async () => {
    await a.leaseRound('t2', 'node-a', [], ['c1'], 300);
    expect((await b.leaseRound('t2', 'node-b', [], ['c1'], 10_000)).held).toEqual([]);
    await new Promise((r) => setTimeout(r, 400));
    expect((await b.leaseRound('t2', 'node-b', [], ['c1'], 10_000)).held).toEqual(['c1']);
    // a, back, cannot renew what b holds now.
    expect((await a.leaseRound('t2', 'node-a', ['c1'], ['c1'], 10_000)).held).toEqual([]);
    await b.releaseAll('t2', 'node-b');
    expect((await a.leaseRound('t2', 'node-a', [], ['c1'], 10_000)).held).toEqual(['c1']);
  });

  it('go to exactly one of two nodes claiming at once', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `n${i}`);
    const [ra, rb] = await Promise.all([a.leaseRound('t3', 'node-a', [], names, 60_000), b.leaseRound('t3', 'node-b', [], names, 60_000)]);
    const overlap = ra.held.filter((n) => rb.held.includes(n));
    expect(overlap).toEqual([]);
  });
});

describe('delivery outcomes', () => {
  it('keep the latest attempt and are read back in write order', async () => {
    await a.putOutcomes([outcome('d1', 1, 'pending'), outcome('d2', 1, 'delivered')]);
    await b.putOutcomes([outcome('d1', 2, 'delivered')]);
    // An older attempt written late does not replace a newer one.
    await a.putOutcomes([outcome('d1', 1, 'pending')]);
    const got = await b.outcomesOf(['d1', 'd2', 'd3']);
    expect(got.map((o) => [o.delivery_id, o.attempts, o.state]).sort()).toEqual([
      ['d1', 2, 'delivered'],
      ['d2', 1, 'delivered'],
    ]);
    const all = await a.outcomesAfter(0n, 100);
    expect(all.map((o) => o.delivery_id)).toEqual(['d2', 'd1']);
    expect(await a.outcomesAfter(all.at(-1)!.seq, 100)).toEqual([]);
  });
});
