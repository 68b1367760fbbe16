/**
 * JT/T 808 authentication over real sockets: a terminal registers (0x0100), gets a random
 * auth code in 0x8100, and must authenticate (0x0102) with it before any report is stored.
 * The code lives in the device stream, so it holds after a restart and on another node.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import type { DeviceClaim } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import type { ProtocolName } from '../../gateway/protocol.js';
import { protocols } from '../../gateway/protocols/index.js';
import { unescapeFrame } from '../../gateway/protocols/jt808/frame.js';
import { Gateway } from '../../gateway/server.js';
import { authCodeOf, authFrame, jt808Encoder, registerFrame } from '../simulator/encoders/jt808.js';
import type { EncodeContext, SimPoint } from '../simulator/encoders/types.js';
import { Route } from '../simulator/route.js';
import { login, replyOf } from '../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { TcpClient } from '../support/tcp-client.js';

const IMEI = imeiFrom('35209807654321');
const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
let h: GatewayHarness | null = null;
const extraGateways: Gateway[] = [];
afterEach(async () => {
  for (const g of extraGateways.splice(0)) await g.stop();
  await h?.close();
  h = null;
});

let routeStart = Date.now() - 3_600_000;

/** Points of their own each call (the store keeps a resent report once, so no two may be alike). */
function points(n: number): SimPoint[] {
  routeStart += 60_000;
  const route = new Route({ seed: 3, startLat: 31.23, startLng: 121.47, startTime: routeStart });
  return Array.from({ length: n }, () => route.next());
}

/** Message id and body of a (2013) reply. */
function parsed(reply: Buffer): { msgId: number; body: Buffer } {
  const bytes = unescapeFrame(reply);
  return { msgId: bytes.readUInt16BE(1), body: bytes.subarray(13, -2) };
}

/** 0x8001 result byte for `frame` (0 ok, 1 failure...); throws when the reply is something else. */
function generalResult(reply: Buffer, frame: Buffer): number {
  const got = parsed(reply);
  const sent = parsed(frame);
  expect(got.msgId).toBe(0x8001);
  expect(got.body.readUInt16BE(2)).toBe(sent.msgId);
  return got.body[4]!;
}

async function exchange(client: TcpClient, frame: Buffer): Promise<Buffer> {
  client.send(frame);
  return client.receive(replyOf(jt808Encoder));
}

async function register(harness: GatewayHarness): Promise<DeviceClaim> {
  return harness.register(IMEI, { terminalId: ctx.terminalId });
}

/** Another gateway node (or the same one restarted) over the harness's store. */
async function node(harness: GatewayHarness): Promise<Record<ProtocolName, number>> {
  const g = new Gateway({
    store: harness.store,
    clock: systemClock,
    log: silentLogger,
    host: '127.0.0.1',
    listeners: [{ protocol: protocols.jt808, port: 0 }],
    offlineAfterS: 600,
    loginTimeoutS: 60,
    maxConnections: 100,
    maxConnectionsPerAddress: 100,
    maxQueuedFrames: 64,
  });
  extraGateways.push(g);
  return g.start();
}

describe('JT/T 808 authentication', () => {
  it('answers a report before authentication with a failure and stores nothing', async () => {
    h = await startGatewayHarness();
    await register(h);
    const client = await TcpClient.open(h.ports.jt808);
    const report = jt808Encoder.encode(points(1), { ...ctx, serial: 5 });
    expect(generalResult(await exchange(client, report), report)).toBe(1);
    const batch = jt808Encoder.encode(points(3), { ...ctx, serial: 6 });
    expect(generalResult(await exchange(client, batch), batch)).toBe(1);
    expect(await h.events('PositionRecorded')).toHaveLength(0);
    expect(await h.events('DeviceConnected')).toHaveLength(0);
    expect(h.gateway.stats.refusals.jt808?.not_authenticated).toBe(2);
  });

  it('refuses and records a terminal nobody registered from its first report, as from a registration', async () => {
    h = await startGatewayHarness();
    const client = await TcpClient.open(h.ports.jt808);
    const report = jt808Encoder.encode(points(1), { ...ctx, serial: 5 });
    expect(generalResult(await exchange(client, report), report)).toBe(1);
    await client.closedPromise;
    expect((await h.events('UnknownDeviceSeen')).map((e) => e.data)).toEqual([
      expect.objectContaining({ identifier: ctx.terminalId.replace(/^0+/, ''), protocol: 'jt808' }),
    ]);
    expect(await h.events('PositionRecorded')).toHaveLength(0);
  });

  it('still answers an e-lock time request (an ASCII sentence that stores nothing) before any authentication', async () => {
    h = await startGatewayHarness();
    const client = await TcpClient.open(h.ports.jt808);
    client.send(Buffer.from('(794104004140,1,001,BASE,2,TIME)', 'latin1'));
    const echo = await client.receive((buf) => {
      const end = buf.indexOf(0x29); // ')'
      return end < 0 ? null : { value: buf.toString('latin1', 0, end + 1), consumed: end + 1 };
    });
    expect(echo).toMatch(/^\(794104004140,1,001,BASE,2,\d{14}\)$/);
    expect(h.gateway.stats.refusals.jt808?.not_authenticated).toBeUndefined();
    client.close();
  });

  it('refuses a wrong auth code (the terminal digits included) and keeps refusing reports', async () => {
    h = await startGatewayHarness();
    await register(h);
    const client = await TcpClient.open(h.ports.jt808);
    const registered = await exchange(client, registerFrame(ctx));
    const code = jt808Encoder.issuedAuthCode(registered);
    expect(code).toMatch(/^[0-9a-f]{16}$/);
    expect(code).not.toBe(authCodeOf(ctx));
    for (const wrong of [authCodeOf(ctx), '0000000000000000', `${code}x`]) {
      const auth = authFrame({ ...ctx, serial: 2, authCode: wrong });
      expect(generalResult(await exchange(client, auth), auth)).toBe(1);
    }
    const report = jt808Encoder.encode(points(1), { ...ctx, serial: 3 });
    expect(generalResult(await exchange(client, report), report)).toBe(1);
    expect(await h.events('PositionRecorded')).toHaveLength(0);
    expect(await h.events('DeviceConnected')).toHaveLength(0);
    expect(h.gateway.stats.refusals.jt808?.auth_failed).toBe(3);
  });

  it('stores reports once the terminal authenticated with the code it was issued; the code is kept hashed', async () => {
    h = await startGatewayHarness();
    const claim = await register(h);
    const client = await TcpClient.open(h.ports.jt808);
    const code = await login(client, jt808Encoder, ctx);
    const report = jt808Encoder.encode(points(2), { ...ctx, serial: 10 });
    expect(generalResult(await exchange(client, report), report)).toBe(0);
    expect(await h.events('PositionRecorded')).toHaveLength(2);
    const issued = await h.events('TerminalAuthCodeIssued');
    expect(issued).toHaveLength(1);
    expect(issued[0]!.stream).toBe(streams.device(claim.device_id));
    expect(JSON.stringify(issued[0]!.data)).not.toContain(code!);
    expect(issued[0]!.data).toMatchObject({ device_id: claim.device_id, auth_code_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('lets a unit re-authenticate with its code on later connections, after a restart and on another node', async () => {
    h = await startGatewayHarness();
    await register(h);
    const first = await TcpClient.open(h.ports.jt808);
    const code = await login(first, jt808Encoder, ctx);
    first.close();
    await first.closedPromise;

    const authOnly = async (port: number, serial: number): Promise<number> => {
      const client = await TcpClient.open(port);
      const auth = authFrame({ ...ctx, serial, authCode: code! });
      const result = generalResult(await exchange(client, auth), auth);
      const report = jt808Encoder.encode(points(1), { ...ctx, serial: serial + 1 });
      const stored = generalResult(await exchange(client, report), report);
      client.close();
      await client.closedPromise;
      expect(stored).toBe(result === 0 ? 0 : 1);
      return result;
    };
    // Same node, new connection: no registration needed.
    expect(await authOnly(h.ports.jt808, 20)).toBe(0);
    // Another node over the same store.
    const other = await node(h);
    expect(await authOnly(other.jt808, 30)).toBe(0);
    // This node restarted: nothing cached, the store still knows the code.
    await h.gateway.stop();
    const restarted = await node(h);
    expect(await authOnly(restarted.jt808, 40)).toBe(0);
    expect(await h.events('TerminalAuthCodeIssued')).toHaveLength(1);
    expect(await h.events('PositionRecorded')).toHaveLength(3);
  });

  it('issues one code a minute per device: a registration sooner is answered "already registered" and the code stands', async () => {
    h = await startGatewayHarness();
    await register(h);
    const first = await TcpClient.open(h.ports.jt808);
    const code = await login(first, jt808Encoder, ctx);
    for (let i = 0; i < 5; i++) {
      const again = registerFrame({ ...ctx, serial: 20 + i });
      const reply = parsed(await exchange(first, again));
      expect(reply.msgId).toBe(0x8100);
      expect(reply.body[2]).toBe(3); // terminal already registered
      expect(reply.body.length).toBe(3); // and no code
    }
    expect(await h.events('TerminalAuthCodeIssued')).toHaveLength(1);
    const auth = authFrame({ ...ctx, serial: 30, authCode: code! });
    expect(generalResult(await exchange(first, auth), auth)).toBe(0);
    first.close();
  });

  it('takes only the latest code: a registration on one node voids the old code on every node', async () => {
    h = await startGatewayHarness();
    await register(h);
    const other = await node(h);
    const a = await TcpClient.open(h.ports.jt808);
    const oldCode = await login(a, jt808Encoder, ctx);
    a.close();
    // Registers again on the other node: a new code.
    const b = await TcpClient.open(other.jt808);
    const newCode = await login(b, jt808Encoder, { ...ctx, serial: 7 });
    b.close();
    expect(newCode).not.toBe(oldCode);
    // The first node had the old code cached: it must take the new one and refuse the old one.
    const c = await TcpClient.open(h.ports.jt808);
    const stale = authFrame({ ...ctx, serial: 9, authCode: oldCode! });
    expect(generalResult(await exchange(c, stale), stale)).toBe(1);
    const fresh = authFrame({ ...ctx, serial: 10, authCode: newCode! });
    expect(generalResult(await exchange(c, fresh), fresh)).toBe(0);
    c.close();
  });
});
