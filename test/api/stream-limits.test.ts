/**
 * The live stream under a hostile customer: a resume from the log's start
 * reads only the customer's own messages (through the stream feed, not a scan
 * of the log), a resume is cut at REPLAY_LIMIT messages with a `gap`, and the
 * number of streams open at once is capped per credential and per customer.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { positionToString, type EventToAppend, type LogPosition } from '../../core/event-store/port.js';
import type { PositionRecorded } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { REPLAY_LIMIT } from '../../api/stream-replay.js';
import { closeListening, listenOnLoopback, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { openSse, type SseClient } from '../support/sse-client.js';
import { positionRecorded } from '../support/store-events.js';
import { until } from '../support/wait.js';

let h: ApiHarness;
let base: string;
const clients: SseClient[] = [];

async function start(streamCaps: { perCredential: number; perCustomer: number }): Promise<void> {
  h = await startApiHarness({ settings: { streamKeepAliveMs: 60_000, streamCaps } });
  base = await listenOnLoopback(h);
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await closeListening(h);
});

async function connect(key: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const c = await openSse(`${base}/v1/stream`, { authorization: `Bearer ${key}`, ...headers });
  clients.push(c);
  return c;
}

async function registerDevice(key: string, imei: string): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: { authorization: `Bearer ${key}` }, payload: { imei, model: 'FMB920' } });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

/** `count` fixes of the device, one a second, appended 500 to a transaction; resolves once the read models have them. */
async function appendFixes(customerId: string, deviceId: string, count: number, startAt: number): Promise<LogPosition> {
  let last: LogPosition | null = null;
  for (let i = 0; i < count; i += 500) {
    const batch: EventToAppend<PositionRecorded>[] = [];
    for (let j = i; j < Math.min(count, i + 500); j++) batch.push(positionRecorded({ customerId, deviceId }, startAt + j * 1000, { lat: 50 + j / 1e5 }));
    last = (await h.store.appendToStream(streams.telemetry(deviceId), batch)).position;
  }
  await h.waitFor(last!);
  return last!;
}

/** Counts the events the store hands out through its reads (the runner follows the log by its own path). */
function countStoreReads(): () => number {
  let events = 0;
  for (const method of ['readAll', 'readStream'] as const) {
    const original = h.store[method].bind(h.store) as (...args: unknown[]) => Promise<unknown[]>;
    vi.spyOn(h.store, method).mockImplementation((async (...args: unknown[]) => {
      const read = await original(...args);
      events += read.length;
      return read;
    }) as never);
  }
  return () => events;
}

const T0 = Date.UTC(2026, 10, 22, 6, 0, 0);

describe('GET /v1/stream under load from one customer', () => {
  beforeEach(() => start({ perCredential: 200, perCustomer: 200 }));

  it("resumes from the log's start reading only the customer's own messages, while other tenants are served", async () => {
    const busy = await h.newCustomer('Busy fleet');
    const busyDevice = await registerDevice(busy.apiKey, imeiFrom('35693803564380'));
    await appendFixes(busy.customerId, busyDevice, 20_000, T0);
    const empty = await h.newCustomer('No devices');
    const small = await h.newCustomer('One fix');
    const smallDevice = await registerDevice(small.apiKey, imeiFrom('86123456789012'));
    const smallFix = await appendFixes(small.customerId, smallDevice, 1, T0);
    const eventsRead = countStoreReads();

    const resumes = await Promise.all(Array.from({ length: 100 }, () => connect(empty.apiKey, { 'last-event-id': '0/0' })));
    expect(resumes.every((c) => c.status === 200)).toBe(true);
    const devices = await fetch(`${base}/v1/devices`, { headers: { authorization: `Bearer ${busy.apiKey}` } });
    expect(devices.status).toBe(200);
    expect(((await devices.json()) as { data: Array<{ id: string }> }).data.map((d) => d.id)).toEqual([busyDevice]);

    // Replays take turns in order: once this one has sent its only fix, the hundred before it are done.
    const one = await connect(small.apiKey, { 'last-event-id': '0/0' });
    const replayed = await one.next((m) => m.event !== null);
    expect(replayed.event).toBe('position');
    expect(replayed.id).toBe(positionToString(smallFix));
    // A scan of the log would have read 20,000 events for each resume.
    expect(eventsRead()).toBeLessThanOrEqual(16);
  });

  it(`replays at most ${REPLAY_LIMIT} messages per request, then a gap up to where live messages start`, async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const deviceId = await registerDevice(apiKey, imeiFrom('35693803564380'));
    const end = await appendFixes(customerId, deviceId, REPLAY_LIMIT + 700, T0);
    const c = await connect(apiKey, { 'last-event-id': '0/0' });
    const ids: string[] = [];
    for (let i = 0; i < REPLAY_LIMIT; i++) {
      const m = await c.next((x) => x.event !== null);
      expect(m.event).toBe('position');
      ids.push(m.id!);
    }
    expect(new Set(ids).size).toBe(REPLAY_LIMIT);
    const gap = await c.next((x) => x.event !== null);
    expect(gap.event).toBe('gap');
    expect(gap.id).toBe(positionToString(end));
    expect(JSON.parse(gap.data)).toEqual({ from: ids.at(-1), to: positionToString(end) });
    const live = await appendFixes(customerId, deviceId, 1, T0 + 86_400_000);
    const next = await c.next((x) => x.event !== null);
    expect(next.id).toBe(positionToString(live));
  });
});

describe('GET /v1/stream caps', () => {
  beforeEach(() => start({ perCredential: 2, perCustomer: 3 }));

  it('refuses streams over the per-credential and per-customer caps with a 429 problem, and counts them in /metrics', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const secondKey = await h.newKey(customerId, ['positions:read']);
    const first = await connect(apiKey);
    await connect(apiKey);
    const overKey = await fetch(`${base}/v1/stream`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(overKey.status).toBe(429);
    expect(overKey.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(overKey.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    const problem = (await overKey.json()) as { code: string; status: number; detail: string };
    expect(problem).toMatchObject({ code: 'too_many_streams', status: 429 });
    expect(problem.detail).toMatch(/At most 2 live streams .* per credential/);

    expect((await connect(secondKey)).status).toBe(200);
    const overCustomer = await fetch(`${base}/v1/stream`, { headers: { authorization: `Bearer ${secondKey}` } });
    expect(overCustomer.status).toBe(429);
    expect(((await overCustomer.json()) as { detail: string }).detail).toMatch(/At most 3 live streams .* per customer/);

    // Another customer is not held by this one's streams.
    const other = await h.newCustomer('Other');
    expect((await connect(other.apiKey)).status).toBe(200);

    const metrics = async () => (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(await metrics()).toMatch(/^fleet_api_streams_open 4$/m);
    expect(await metrics()).toMatch(/^fleet_api_streams_refused_total 2$/m);

    // A closed stream gives its place back.
    first.close();
    await until(async () => (await metrics()).includes('fleet_api_streams_open 3\n'), 'the closed stream released');
    expect((await connect(apiKey)).status).toBe(200);
  });
});
