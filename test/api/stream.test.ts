import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { positionToString, type LogPosition } from '../../core/event-store/port.js';
import { imeiFrom } from '../../core/imei.js';
import { closeListening, listenOnLoopback, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { openSse, type SseClient } from '../support/sse-client.js';
import { raiseDeviceEvent, recordPosition } from '../support/store-events.js';

let h: ApiHarness;
let base: string;
const clients: SseClient[] = [];
let closed = false;

beforeEach(async () => {
  closed = false;
  h = await startApiHarness({ settings: { streamKeepAliveMs: 100 } });
  base = await listenOnLoopback(h);
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  if (!closed) await closeListening(h);
});

async function connect(key: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const c = await openSse(`${base}/v1/stream`, { authorization: `Bearer ${key}`, ...headers });
  clients.push(c);
  return c;
}

async function registerDevice(key: string, imei: string, name: string): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: { authorization: `Bearer ${key}` }, payload: { imei, model: 'FMB920', name } });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

/** Each fix and event one second after the one before, from 12:00:00 UTC on the harness's day. */
let n = 0;
const nextSecond = () => Date.UTC(2026, 10, 22, 12, 0, 0) + ++n * 1000;

/** A fix at 42 km/h, 12 m up, at `lat`, moving on 12.8 V (Teltonika IO 240 and 66); resolves with its log position, the id of its stream message. */
function record(customerId: string, deviceId: string, lat: number): Promise<LogPosition> {
  return recordPosition(h, { customerId, deviceId }, nextSecond(), { lat, speed_kmh: 42, altitude_m: 12, attributes: { io240: 1, io66: 12_800 } });
}

/** A harsh brake, as the server's detector would raise it. */
async function raiseEvent(customerId: string, deviceId: string): Promise<void> {
  const t = nextSecond();
  await raiseDeviceEvent(h, { customerId, deviceId }, t, {
    kind: 'event.harsh_brake', severity: 'medium', source: 'server', position: { lat: 56.9, lng: 24.1, speed_kmh: 20, heading_deg: 90, timestamp: t },
    fields: { delta_kmh: -18, duration_ms: 1500 },
  });
}

describe('GET /v1/stream', () => {
  it('streams the tenant\'s positions live, with log positions as ids, and rate-limit headers', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const other = await h.newCustomer('Other');
    const deviceId = await registerDevice(apiKey, '356938035643809', 'Van 1');
    const otherDevice = await registerDevice(other.apiKey, imeiFrom('86123456789012'), 'Not yours');
    const c = await connect(apiKey);
    expect(c.status).toBe(200);
    expect(c.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(c.headers.get('ratelimit-policy')).toBe('"pro";q=1200;w=120');

    await record(other.customerId, otherDevice, 10);
    const at = await record(customerId, deviceId, 56.95);
    const msg = await c.next();
    expect(msg.event).toBe('position');
    expect(msg.id).toBe(positionToString(at));
    expect(JSON.parse(msg.data)).toEqual({
      device_id: deviceId, device_name: 'Van 1', lat: 56.95, lng: 24.1, speed_kmh: 42, heading_deg: 90, altitude_m: 12,
      satellites: 9, valid: true, ignition: true, timestamp: '2026-11-22T12:00:02.000Z', received_at: '2026-11-22T12:00:02.400Z',
      attributes: { ignition: true, movement: true, external_voltage_v: 12.8, io: { '66': 12_800, '240': 1 } },
    });
  });

  it('sends event types by scope: events:read gets `event`, positions:read gets `position`', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const deviceId = await registerDevice(apiKey, '356938035643809', 'Van 1');
    const eventsOnly = await connect(await h.newKey(customerId, ['events:read']));
    const positionsOnly = await connect(await h.newKey(customerId, ['positions:read']));
    await raiseEvent(customerId, deviceId);
    const last = await record(customerId, deviceId, 56.9);

    const ev = await eventsOnly.next();
    expect(ev.event).toBe('event');
    expect(JSON.parse(ev.data)).toMatchObject({
      event: 'event.harsh_brake', device_id: deviceId, device_name: 'Van 1', severity: 'medium', delta_kmh: -18, source: 'server',
      position: { lat: 56.9, lng: 24.1, speed_kmh: 20 },
    });
    const pos = await positionsOnly.next();
    expect(pos.event).toBe('position');
    expect(pos.id).toBe(positionToString(last));
  });

  it('resumes after Last-Event-ID: what was missed is replayed from the store, in order, then live', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const deviceId = await registerDevice(apiKey, '356938035643809', 'Van 1');
    const first = await connect(apiKey);
    await record(customerId, deviceId, 1);
    const seen = await first.next();
    first.close();

    // Another customer's fix and event in between: the replay must skip them as the live stream does.
    const other = await h.newCustomer('Other');
    const otherDevice = await registerDevice(other.apiKey, imeiFrom('86123456789012'), 'Not yours');
    await record(customerId, deviceId, 2);
    await record(other.customerId, otherDevice, 10);
    await raiseEvent(other.customerId, otherDevice);
    await raiseEvent(customerId, deviceId);
    const third = await record(customerId, deviceId, 3);

    const resumed = await connect(apiKey, { 'last-event-id': seen.id! });
    const replayed = [await resumed.next(), await resumed.next(), await resumed.next()];
    expect(replayed.map((m) => m.event)).toEqual(['position', 'event', 'position']);
    expect(replayed.map((m) => (m.event === 'position' ? JSON.parse(m.data).lat : null))).toEqual([2, null, 3]);
    expect(replayed[2]!.id).toBe(positionToString(third));
    const live = await record(customerId, deviceId, 4);
    const next = await resumed.next();
    expect(next.id).toBe(positionToString(live));
  });

  it('refuses a Last-Event-ID past the end of the log (another store\'s, or made up) with a clear error', async () => {
    const { apiKey } = await h.newCustomer();
    const ahead = await fetch(`${base}/v1/stream`, { headers: { authorization: `Bearer ${apiKey}`, 'last-event-id': '9000000000/9000000000' } });
    expect(ahead.status).toBe(400);
    const problem = (await ahead.json()) as { code: string; detail: string };
    expect(problem.code).toBe('unknown_last_event_id');
    expect(problem.detail).toContain('9000000000/9000000000');
  });

  it('refuses a malformed Last-Event-ID, a missing credential and a credential without either scope', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const bad = await fetch(`${base}/v1/stream`, { headers: { authorization: `Bearer ${apiKey}`, 'last-event-id': 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: Array<{ pointer: string }> }).errors[0]!.pointer).toBe('/headers/last-event-id');
    const anonymous = await fetch(`${base}/v1/stream`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const devicesOnly = await fetch(`${base}/v1/stream`, {
      headers: { authorization: `Bearer ${await h.newKey(customerId, ['devices:read'])}` },
    });
    expect(devicesOnly.status).toBe(403);
    expect(((await devicesOnly.json()) as { detail: string }).detail).toMatch(/positions:read.*events:read/);
  });

  it('sends keep-alive comments, and ends streams cleanly when the server shuts down', async () => {
    const { apiKey } = await h.newCustomer();
    const c = await connect(apiKey);
    const ping = await c.next((m) => m.comment === 'keep-alive');
    expect(ping.event).toBeNull();
    const stopping = h.close();
    closed = true;
    await c.ended();
    await stopping;
  });

  it('stops listening to the runner when the client goes away', async () => {
    const { apiKey } = await h.newCustomer();
    const listeners = () => (h.runner as unknown as { appliedListeners: Set<unknown> }).appliedListeners.size;
    // The app itself follows the runner too (the latest-positions index); the stream adds one listener.
    const before = listeners();
    const c = await connect(apiKey);
    await c.next((m) => m.comment === 'connected' || m.comment === 'keep-alive');
    expect(listeners()).toBe(before + 1);
    c.close();
    for (let i = 0; i < 50 && listeners() > before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(listeners()).toBe(before);
  });

  it('ends the stream when its API key is revoked, and only that key\'s stream', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const deviceId = await registerDevice(apiKey, '356938035643809', 'Van 1');
    const createKey = async () => {
      const res = await h.app.inject({
        method: 'POST', url: '/v1/api-keys', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'dashboard', scopes: ['positions:read'] },
      });
      expect(res.statusCode).toBe(201);
      return res.json() as { id: string; secret: string };
    };
    const [doomed, kept] = [await createKey(), await createKey()];
    const revokedStream = await connect(doomed.secret);
    const keptStream = await connect(kept.secret);
    expect(revokedStream.status).toBe(200);

    const revoke = await h.app.inject({ method: 'DELETE', url: `/v1/api-keys/${doomed.id}`, headers: { authorization: `Bearer ${apiKey}` } });
    expect(revoke.statusCode).toBe(204);
    const last = await revokedStream.next((m) => m.comment !== null && m.comment !== 'keep-alive' && m.comment !== 'connected');
    expect(last.comment).toBe('credential revoked');
    await revokedStream.ended();

    const at = await record(customerId, deviceId, 56.9);
    expect((await keptStream.next()).id).toBe(positionToString(at));
    const again = await fetch(`${base}/v1/stream`, { headers: { authorization: `Bearer ${doomed.secret}` } });
    expect(again.status).toBe(401);
  });

  it('ends the stream of an OAuth token when its client is deleted', async () => {
    const { apiKey } = await h.newCustomer();
    const token = await oauthToken(apiKey);
    const c = await connect(token.access_token);
    expect(c.status).toBe(200);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/oauth/clients/${token.clientId}`, headers: { authorization: `Bearer ${apiKey}` } });
    expect(del.statusCode).toBe(204);
    await c.ended();
  });

  it('ends the stream of an OAuth token when the token expires on the clock, not before', async () => {
    const { customerId, apiKey } = await h.newCustomer();
    const deviceId = await registerDevice(apiKey, '356938035643809', 'Van 1');
    const token = await oauthToken(apiKey);
    const c = await connect(token.access_token);
    h.clock.advance(token.expires_in * 1000 - 1);
    // Two keep-alives later the clock has been looked at with the token one millisecond from expiry: still streaming.
    await c.next((m) => m.comment === 'keep-alive');
    await c.next((m) => m.comment === 'keep-alive');
    const at = await record(customerId, deviceId, 56.9);
    expect((await c.next()).id).toBe(positionToString(at));
    h.clock.advance(1);
    const last = await c.next((m) => m.comment === 'credential expired');
    expect(last.event).toBeNull();
    await c.ended();
  });
});

/** An OAuth client with positions:read, created with `apiKey`, and a token for it. */
async function oauthToken(apiKey: string): Promise<{ access_token: string; expires_in: number; clientId: string }> {
  const client = await h.app.inject({
    method: 'POST', url: '/v1/oauth/clients', headers: { authorization: `Bearer ${apiKey}` }, payload: { name: 'Integrator', scopes: ['positions:read'] },
  });
  expect(client.statusCode).toBe(201);
  const { client_id, client_secret } = client.json() as { client_id: string; client_secret: string };
  const token = await h.app.inject({
    method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id, client_secret },
  });
  expect(token.statusCode).toBe(200);
  return { ...(token.json() as { access_token: string; expires_in: number }), clientId: client_id };
}
