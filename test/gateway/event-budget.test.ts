/**
 * What unauthenticated traffic and reconnecting units may write, over real sockets: events
 * about unknown devices within a budget shared by every identifier, and connection events
 * bounded per device (quick redials write nothing) and overall, with status still right.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { DEVICE_EVENT_BURST, DEVICE_EVENT_PER_SECOND } from '../../gateway/server.js';
import { encoders } from '../simulator/run.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { login, until } from '../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { TcpClient } from '../support/tcp-client.js';
import { statusFrom } from '../support/device-status.js';

let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const connectionEvents = async (harness: GatewayHarness) =>
  [...(await harness.events('DeviceConnected')), ...(await harness.events('DeviceDisconnected'))].length;

describe('unknown devices', () => {
  it('2,000 distinct unknown IMEIs in a burst append no more than the shared budget, and every one is counted', async () => {
    h = await startGatewayHarness();
    const started = Date.now();
    const total = 2_000;
    for (let batch = 0; batch < total; batch += 100) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const imei = imeiFrom(`3520980${String(batch + i).padStart(7, '0')}`);
          const client = await TcpClient.open(h!.ports.teltonika);
          client.send(encoders.teltonika.loginFrame({ imei, terminalId: '', serial: 1 }, [])!);
          await client.closedPromise;
        }),
      );
    }
    const elapsedS = (Date.now() - started) / 1000;
    const budget = DEVICE_EVENT_BURST + Math.ceil(elapsedS + 1) * DEVICE_EVENT_PER_SECOND;
    const seen = await h.events('UnknownDeviceSeen');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThanOrEqual(budget);
    expect(seen.length).toBeLessThan(total / 10);
    expect(h.gateway.stats.unknownDeviceFrames).toBe(total);
    expect(h.gateway.stats.deviceEventsSuppressed.unknown_device).toBe(total - seen.length);
  });
});

describe('connection events', () => {
  const IMEI = imeiFrom('35209807333333');
  const ctx: EncodeContext = { imei: IMEI, terminalId: '', serial: 1 };

  it('a reconnect storm of one device appends a bounded number of events; it ends online, then offline once gone', async () => {
    h = await startGatewayHarness({ reconnectGraceMs: 1_500 });
    const claim = await h.register(IMEI);
    for (let i = 0; i < 50; i++) {
      const client = await TcpClient.open(h.ports.teltonika);
      await login(client, encoders.teltonika, ctx);
      client.close();
      await client.closedPromise;
    }
    const last = await TcpClient.open(h.ports.teltonika);
    await login(last, encoders.teltonika, ctx);
    await until(async () => statusFrom(await h!.events(), claim.device_id) === 'online', 5_000, 'online');
    // Past the grace period of the last close in the storm: still online, one event in all.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(statusFrom(await h.events(), claim.device_id)).toBe('online');
    expect(await connectionEvents(h)).toBe(1);
    expect(h.gateway.stats.connectionEventsSuppressed).toBeGreaterThan(0);

    last.close();
    await until(async () => statusFrom(await h!.events(), claim.device_id) === 'offline', 5_000, 'offline');
    expect(await connectionEvents(h)).toBe(2);
  });

  it('many devices at once: writes wait for the shared budget, and each device still ends with the right status', async () => {
    h = await startGatewayHarness({ connectionEventBudget: { burst: 5, perSecond: 20 } });
    const devices = await Promise.all(Array.from({ length: 30 }, (_, i) => h!.register(imeiFrom(`3520980744${String(i).padStart(4, '0')}`))));
    const clients = await Promise.all(
      devices.map(async (d) => {
        const client = await TcpClient.open(h!.ports.teltonika);
        await login(client, encoders.teltonika, { imei: d.imei, terminalId: '', serial: 1 });
        return client;
      }),
    );
    // A third leave again at once: they may never have been written online, but must end offline.
    for (const c of clients.slice(0, 10)) c.close();
    await until(
      async () => {
        const events = await h!.events();
        return devices.every((d, i) => statusFrom(events, d.device_id) === (i < 10 ? 'offline' : 'online') || (i < 10 && statusFrom(events, d.device_id) === 'never_connected'));
      },
      10_000,
      'statuses settled',
    );
    expect(h.gateway.stats.connectionEventsDeferred).toBeGreaterThan(0);
    // Nothing written beyond one connected (and one disconnected for those that left) per device.
    expect((await h.events('DeviceConnected')).length).toBeLessThanOrEqual(30);
    expect((await h.events('DeviceDisconnected')).length).toBeLessThanOrEqual(10);
    for (const c of clients.slice(10)) c.close();
  });
});
