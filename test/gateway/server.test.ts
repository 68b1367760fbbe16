/**
 * The gateway over real sockets: handshakes, ack-after-durable, refusal of
 * unknown devices, idempotent resends, robustness against junk.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../core/event-store/port.js';
import type { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { imeiFrom } from '../../core/imei.js';
import type { PositionRecorded } from '../../core/events.js';
import { encoders } from '../simulator/run.js';
import { Route, mulberry32 } from '../simulator/route.js';
import type { EncodeContext, LoginStep, ProtocolEncoder, SimPoint } from '../simulator/encoders/types.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { TcpClient } from '../support/tcp-client.js';

const IMEI = imeiFrom('35209807123456');
let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

function points(n: number, seed = 7): SimPoint[] {
  const route = new Route({ seed, startLat: 56.95, startLng: 24.1, startTime: Date.UTC(2026, 5, 1, 8) });
  return Array.from({ length: n }, () => route.next());
}

function replyOf(encoder: ProtocolEncoder) {
  return (buf: Buffer) => {
    const t = encoder.takeReply(buf);
    return t ? { value: t.reply, consumed: t.consumed } : null;
  };
}

/** The login dialog, every step acked; resolves with the JT/T 808 auth code the unit keeps for its next connection. */
async function handshake(client: TcpClient, encoder: ProtocolEncoder, ctx: EncodeContext): Promise<string | undefined> {
  const steps: LoginStep[] = [];
  let authCode = ctx.authCode;
  for (let frame = encoder.loginFrame(ctx, steps); frame; frame = encoder.loginFrame(ctx, steps)) {
    client.send(frame);
    const reply = await client.receive(replyOf(encoder));
    expect(encoder.isAck(reply, frame, 0)).toBe(true);
    steps.push({ frame, reply });
    authCode = encoder.issuedAuthCode(reply) ?? authCode;
  }
  return authCode;
}

async function until(check: () => Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['teltonika', 'gt06', 'jt808'] as const)('%s device over TCP', (protocol) => {
  const encoder = encoders[protocol];
  const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };

  it('logs in, has its records stored, and gets its ack with the stored values', async () => {
    h = await startGatewayHarness();
    const claim = await h.register(IMEI, protocol === 'jt808' ? { terminalId: ctx.terminalId } : {});
    const client = await TcpClient.open(h.ports[protocol]);
    await handshake(client, encoder, ctx);
    const sent = points(Math.min(3, encoder.maxPointsPerFrame));
    const frame = encoder.encode(sent, { ...ctx, serial: 2 });
    client.send(frame);
    const ack = await client.receive(replyOf(encoder));
    expect(encoder.isAck(ack, frame, sent.length)).toBe(true);
    // The ack came after the append: the records are already in the store.
    const stored = (await h.events('PositionRecorded')) as unknown as Array<{ data: PositionRecorded['data']; stream: string }>;
    expect(stored).toHaveLength(sent.length);
    stored.forEach((e, i) => {
      const p = sent[i]!;
      expect(e.stream).toBe(`telemetry-${claim.device_id}`);
      expect(e.data).toMatchObject({ device_id: claim.device_id, customer_id: claim.customer_id, protocol, fix_time: p.fixTime, ignition: true });
      expect(e.data.lat).toBeCloseTo(p.lat, 5);
      expect(e.data.lng).toBeCloseTo(p.lng, 5);
      expect(e.data.speed_kmh).toBeCloseTo(p.speedKmh, 0);
    });
    expect((await h.events('DeviceConnected')).map((e) => (e.data as { protocol: string }).protocol)).toEqual([protocol]);
    client.close();
    await until(async () => (await h!.events('DeviceDisconnected')).length === 1);
  });

  it('refuses an unregistered device, closes the connection and records it', async () => {
    h = await startGatewayHarness();
    const client = await TcpClient.open(h.ports[protocol]);
    const first = encoder.loginFrame(ctx, []);
    client.send(first!);
    await client.closedPromise;
    if (protocol === 'teltonika') expect(client.unread.toString('hex')).toBe('00');
    const unknown = await h.events('UnknownDeviceSeen');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]!.data).toMatchObject({ protocol, count: 1 });
    expect(await h.events('PositionRecorded')).toHaveLength(0);
  });

  it('stores a frame resent after a lost ack only once', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI, protocol === 'jt808' ? { terminalId: ctx.terminalId } : {});
    const frame = encoder.encode(points(1), { ...ctx, serial: 2 });
    let authCode: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      const client = await TcpClient.open(h.ports[protocol]);
      // A JT/T 808 unit keeps its auth code and only authenticates the second time.
      authCode = await handshake(client, encoder, { ...ctx, ...(authCode ? { authCode } : {}) });
      client.send(frame);
      await client.receive(replyOf(encoder));
      client.close();
    }
    expect(await h.events('PositionRecorded')).toHaveLength(1);
  });
});

describe('ack after durability', () => {
  const encoder = encoders.teltonika;
  const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };

  it('holds the ack until the append resolves', async () => {
    let release: (() => void) | null = null;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated = (s: SqliteEventStore): EventStore => ({
      appendToStream: async (stream, events, options) => {
        if (stream.startsWith('telemetry-')) await gate;
        return s.appendToStream(stream, events, options);
      },
      readStream: (stream, o) => s.readStream(stream, o),
      readAll: (o) => s.readAll(o),
      subscribeToAll: (o) => s.subscribeToAll(o),
      close: () => s.close(),
    });
    h = await startGatewayHarness({ wrapStore: gated });
    await h.register(IMEI);
    const client = await TcpClient.open(h.ports.teltonika);
    await handshake(client, encoder, ctx);
    const frame = encoder.encode(points(2), { ...ctx, serial: 2 });
    client.send(frame);
    expect(await client.silentFor(300)).toBe(true);
    expect(await h.events('PositionRecorded')).toHaveLength(0);
    release!();
    const ack = await client.receive(replyOf(encoder));
    expect(encoder.isAck(ack, frame, 2)).toBe(true);
    expect(await h.events('PositionRecorded')).toHaveLength(2);
    client.close();
  });

  it('sends no ack and closes when the store refuses the append', async () => {
    const failing = (s: SqliteEventStore): EventStore => ({
      appendToStream: async (stream, events, options) => {
        if (stream.startsWith('telemetry-')) throw new Error('disk full');
        return s.appendToStream(stream, events, options);
      },
      readStream: (stream, o) => s.readStream(stream, o),
      readAll: (o) => s.readAll(o),
      subscribeToAll: (o) => s.subscribeToAll(o),
      close: () => s.close(),
    });
    h = await startGatewayHarness({ wrapStore: failing });
    await h.register(IMEI);
    const client = await TcpClient.open(h.ports.teltonika);
    await handshake(client, encoder, ctx);
    client.send(encoder.encode(points(1), { ...ctx, serial: 2 }));
    await client.closedPromise;
    expect(client.unread.length).toBe(0);
    expect(h.gateway.stats.appendFailures).toBe(1);
  });
});

describe('robustness', () => {
  it('survives random bytes and truncated frames on every port, and keeps serving devices', async () => {
    h = await startGatewayHarness({ loginTimeoutS: 2 });
    await h.register(IMEI);
    const rand = mulberry32(42);
    const clients: TcpClient[] = [];
    for (const protocol of ['teltonika', 'gt06', 'jt808'] as const) {
      for (let c = 0; c < 10; c++) {
        const client = await TcpClient.open(h.ports[protocol]);
        const junk = Buffer.alloc(1 + Math.floor(rand() * 3000));
        for (let i = 0; i < junk.length; i++) junk[i] = Math.floor(rand() * 256);
        client.send(junk);
        const valid = encoders[protocol].encode(points(1), { imei: IMEI, terminalId: IMEI.slice(3), serial: 9 });
        client.send(valid.subarray(0, Math.max(1, Math.floor(valid.length / 2)))); // truncated
        clients.push(client);
      }
    }
    await new Promise((r) => setTimeout(r, 300));
    const encoder = encoders.teltonika;
    const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
    const client = await TcpClient.open(h.ports.teltonika);
    await handshake(client, encoder, ctx);
    const frame = encoder.encode(points(1), { ...ctx, serial: 2 });
    client.send(frame);
    expect(encoder.isAck(await client.receive(replyOf(encoder)), frame, 1)).toBe(true);
    expect(await h.events('PositionRecorded')).toHaveLength(1);
    for (const c of clients) c.close();
    client.close();
  });

  it('closes a Teltonika connection whose stream cannot be framed', async () => {
    h = await startGatewayHarness();
    const client = await TcpClient.open(h.ports.teltonika);
    client.send(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await client.closedPromise;
    expect(client.closed).toBe(true);
  });

  it('closes a connection that never identifies itself', async () => {
    h = await startGatewayHarness({ loginTimeoutS: 1 });
    const client = await TcpClient.open(h.ports.gt06);
    await client.closedPromise;
    expect(client.closed).toBe(true);
  });

  it('marks a silent device offline after offline_after_s and closes its connection', async () => {
    h = await startGatewayHarness({ offlineAfterS: 1 });
    await h.register(IMEI);
    const client = await TcpClient.open(h.ports.teltonika);
    await handshake(client, encoders.teltonika, { imei: IMEI, terminalId: '', serial: 1 });
    await client.closedPromise;
    await until(async () => (await h!.events('DeviceDisconnected')).length === 1);
    expect((await h.events('DeviceDisconnected'))[0]!.data).toMatchObject({ reason: 'idle_timeout' });
  });

  it('enforces the connection cap', async () => {
    h = await startGatewayHarness({ maxConnections: 2 });
    const a = await TcpClient.open(h.ports.gt06);
    const b = await TcpClient.open(h.ports.gt06);
    const c = await TcpClient.open(h.ports.gt06);
    await c.closedPromise;
    expect(a.closed || b.closed).toBe(false);
    a.close();
    b.close();
  });
});
