/**
 * One protocol per device, over real sockets: the protocol a registration names, else the
 * one of the first connection. A login over another one is refused, counted and recorded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { encoders } from '../simulator/run.js';
import { Route } from '../simulator/route.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { login, replyOf, sendPoints, until } from '../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { TcpClient } from '../support/tcp-client.js';

const IMEI = imeiFrom('35209807111111');
const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const route = new Route({ seed: 9, startLat: 56.95, startLng: 24.1, startTime: Date.now() - 3_600_000 });

/** Sends the GT06 login of IMEI; resolves once the gateway has closed the connection (throws if it acks). */
async function refusedOnGt06(port: number): Promise<TcpClient> {
  const client = await TcpClient.open(port);
  client.send(encoders.gt06.loginFrame(ctx, [])!);
  client.send(encoders.gt06.encode([route.next()], { ...ctx, serial: 2 }));
  await client.closedPromise;
  expect(encoders.gt06.takeReply(client.unread)).toBeNull();
  return client;
}

describe('one protocol per device', () => {
  it('refuses a Teltonika IMEI on the GT06 port, records it, and keeps the unit working over Teltonika', async () => {
    h = await startGatewayHarness();
    const claim = await h.register(IMEI);
    const unit = await TcpClient.open(h.ports.teltonika);
    await login(unit, encoders.teltonika, ctx);
    const sent = await sendPoints(unit, encoders.teltonika, { ...ctx, serial: 2 }, [route.next()]);
    expect(encoders.teltonika.isAck(sent.reply, sent.frame, 1)).toBe(true);
    expect((await h.events('DeviceProtocolBound')).map((e) => e.data)).toEqual([
      expect.objectContaining({ device_id: claim.device_id, protocol: 'teltonika' }),
    ]);

    await until(async () => (await h!.events('DeviceConnected')).length > 0, 5_000, 'connected');
    await refusedOnGt06(h.ports.gt06);
    expect(await h.events('PositionRecorded')).toHaveLength(1);
    expect((await h.events('DeviceConnected')).map((e) => (e.data as { protocol: string }).protocol)).toEqual(['teltonika']);
    const refused = await h.events('DeviceLoginRefused');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.stream).toBe(`device-${claim.device_id}`);
    expect(refused[0]!.data).toMatchObject({ reason: 'protocol_mismatch', protocol: 'gt06', bound_protocol: 'teltonika', count: 1 });
    expect(h.gateway.stats.refusals.gt06?.protocol_mismatch).toBe(1);

    // The real unit's connection was not touched.
    const again = await sendPoints(unit, encoders.teltonika, { ...ctx, serial: 3 }, [route.next()]);
    expect(encoders.teltonika.isAck(again.reply, again.frame, 1)).toBe(true);
    unit.close();
  });

  it('holds to the protocol given at registration, even on the first connection', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI, { protocol: 'gt06' });
    const client = await TcpClient.open(h.ports.teltonika);
    client.send(encoders.teltonika.loginFrame(ctx, [])!);
    await client.closedPromise;
    expect(client.unread.toString('hex')).toBe('00'); // Teltonika's "not accepted"
    expect(await h.events('DeviceConnected')).toHaveLength(0);
    expect(await h.events('DeviceProtocolBound')).toHaveLength(0);
    // Its own protocol logs in.
    const gt06 = await TcpClient.open(h.ports.gt06);
    await login(gt06, encoders.gt06, ctx);
    await until(async () => (await h!.events('DeviceConnected')).length > 0, 5_000, 'connected');
    expect((await h.events('DeviceConnected')).map((e) => (e.data as { protocol: string }).protocol)).toEqual(['gt06']);
    gt06.close();
  });

  it('refuses a JT/T 808 registration for a unit bound to another protocol: no auth code', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI, { terminalId: ctx.terminalId, protocol: 'teltonika' });
    const client = await TcpClient.open(h.ports.jt808);
    const register = encoders.jt808.loginFrame(ctx, [])!;
    client.send(register);
    const reply = await client.receive(replyOf(encoders.jt808));
    expect(encoders.jt808.isAck(reply, register, 0)).toBe(false);
    await client.closedPromise;
    expect(await h.events('TerminalAuthCodeIssued')).toHaveLength(0);
  });

  it('records repeated wrong-protocol logins of one device once a minute, and counts every one', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI, { protocol: 'teltonika' });
    for (let i = 0; i < 20; i++) await refusedOnGt06(h.ports.gt06);
    expect(h.gateway.stats.refusals.gt06?.protocol_mismatch).toBe(20);
    expect(await h.events('DeviceLoginRefused')).toHaveLength(1);
  });
});
