/**
 * A second connection for a connected device, over real sockets: the newest wins, the
 * older socket is closed, and the replacement is recorded (event, log line, counter).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeviceConnectionReplaced } from '../../core/events.js';
import { imeiFrom } from '../../core/imei.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { encoders } from '../simulator/run.js';
import { Route } from '../simulator/route.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { login, sendPoints, until } from '../support/device-login.js';
import { statusFrom } from '../support/device-status.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { capturingLogger, startPlatformHarness, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';

const IMEI = imeiFrom('35209807222222');
const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
let h: GatewayHarness | null = null;
let p: PlatformHarness | null = null;
afterEach(async () => {
  await h?.close();
  await p?.close();
  h = null;
  p = null;
});

const route = new Route({ seed: 4, startLat: 56.95, startLng: 24.1, startTime: Date.now() - 3_600_000 });

describe.each(['teltonika', 'gt06', 'jt808'] as const)('%s: a second connection of a connected device', (protocol) => {
  it('wins: the older socket is closed, the replacement recorded, and the device stays online', async () => {
    const captured = capturingLogger('info');
    h = await startGatewayHarness({ log: captured.log });
    const claim = await h.register(IMEI, protocol === 'jt808' ? { terminalId: ctx.terminalId } : {});
    const encoder = encoders[protocol];
    const first = await TcpClient.open(h.ports[protocol]);
    const authCode = await login(first, encoder, ctx);
    await until(async () => (await h!.events('DeviceConnected')).length === 1, 5_000, 'connected');

    const firstPort = first.socket.localPort;
    const second = await TcpClient.open(h.ports[protocol]);
    await login(second, encoder, { ...ctx, serial: 5, ...(authCode ? { authCode } : {}) });
    await first.closedPromise;
    const sent = await sendPoints(second, encoder, { ...ctx, serial: 9 }, [route.next()]);
    expect(encoder.isAck(sent.reply, sent.frame, 1)).toBe(true);

    const replaced = (await h.events('DeviceConnectionReplaced')) as unknown as Array<RecordedEvent<DeviceConnectionReplaced>>;
    expect(replaced).toHaveLength(1);
    expect(replaced[0]!.stream).toBe(`device-${claim.device_id}`);
    expect(replaced[0]!.data).toMatchObject({
      device_id: claim.device_id,
      previous_remote_address: `127.0.0.1:${firstPort}`,
      remote_address: `127.0.0.1:${second.socket.localPort}`,
      protocol,
      count: 1,
    });
    expect(h.gateway.stats.connectionsReplaced).toBe(1);
    expect(captured.lines.filter((l) => l.includes('device.connection_replaced'))).toHaveLength(1);
    // The old socket closing does not take the device offline.
    await new Promise((r) => setTimeout(r, 100));
    expect(statusFrom(await h.events(), claim.device_id)).toBe('online');
    second.close();
    await until(async () => statusFrom(await h!.events(), claim.device_id) === 'offline', 5_000, 'offline');
  });
});

describe('replacements', () => {
  it('are counted in /metrics', async () => {
    p = await startPlatformHarness();
    await p.registerDevice({ imei: IMEI });
    const first = await TcpClient.open(p.platform.ports.teltonika!);
    await login(first, encoders.teltonika, ctx);
    const second = await TcpClient.open(p.platform.ports.teltonika!);
    await login(second, encoders.teltonika, ctx);
    await first.closedPromise;
    const metrics = await (await fetch(`${p.base}/metrics`)).text();
    expect(metrics).toMatch(/^fleet_gateway_connections_replaced_total 1$/m);
    second.close();
  });

  it('of one device are recorded at most once a minute, each one counted', async () => {
    h = await startGatewayHarness();
    const claim = await h.register(IMEI);
    let previous = await TcpClient.open(h.ports.teltonika);
    await login(previous, encoders.teltonika, ctx);
    for (let i = 0; i < 20; i++) {
      const next = await TcpClient.open(h.ports.teltonika);
      await login(next, encoders.teltonika, ctx);
      await previous.closedPromise;
      previous = next;
    }
    expect(h.gateway.stats.connectionsReplaced).toBe(20);
    // Recorded after the replacement, not before it is answered: wait for it, then for the connection.
    await until(async () => (await h!.events('DeviceConnectionReplaced')).length > 0, 5_000, 'replacement recorded');
    // One connection throughout, as far as the device stream is concerned.
    await until(async () => (await h!.events('DeviceConnected')).length === 1, 5_000, 'connected');
    expect(await h.events('DeviceConnectionReplaced')).toHaveLength(1);
    expect(await h.events('DeviceDisconnected')).toHaveLength(0);
    expect(statusFrom(await h.events(), claim.device_id)).toBe('online');
    previous.close();
  });
});
