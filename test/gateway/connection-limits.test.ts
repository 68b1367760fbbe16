/**
 * Connection limits over real sockets: a login deadline that traffic does not
 * extend, a total cap below the open-file limit, a per-address cap with
 * backoff, and the API still answering while one address holds the gateway.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { parseFileLimit, readFileLimit, reservedDescriptors } from '../../gateway/connection-limits.js';
import { encoders } from '../simulator/run.js';
import { Route } from '../simulator/route.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { login, sendPoints, until } from '../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { capturingLogger, startPlatformHarness, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';

const IMEI = imeiFrom('35209807123456');
let h: GatewayHarness | null = null;
let p: PlatformHarness | null = null;
const clients: TcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await h?.close();
  await p?.close();
  h = null;
  p = null;
});

async function open(port: number, localAddress?: string): Promise<TcpClient> {
  const c = await TcpClient.open(port, '127.0.0.1', localAddress);
  clients.push(c);
  return c;
}

const route = () => new Route({ seed: 3, startLat: 56.95, startLng: 24.1, startTime: Date.now() - 60_000 });

describe('login deadline', () => {
  it('closes a connection that has not logged in by the deadline, however steadily it sends', async () => {
    h = await startGatewayHarness({ loginTimeoutS: 1 });
    const client = await open(h.ports.gt06);
    // A GT06 frame announcing 255 content bytes, fed a byte every 100 ms: it would take 26 s to complete.
    client.send(Buffer.from([0x78, 0x78, 0xff]));
    const drip = setInterval(() => !client.closed && client.send(Buffer.from([0x00])), 100);
    try {
      await until(() => client.closed, 20_000, 'connection closed');
    } finally {
      clearInterval(drip);
    }
    expect(h.gateway.stats.loginTimeouts).toBe(1);
    await until(() => h!.gateway.openConnections === 0, 10_000, 'connection released');
  });

  it('does not cut a device that logged in before it', async () => {
    h = await startGatewayHarness({ loginTimeoutS: 1 });
    await h.register(IMEI);
    const client = await open(h.ports.teltonika);
    const ctx: EncodeContext = { imei: IMEI, terminalId: '', serial: 1 };
    await login(client, encoders.teltonika, ctx);
    await new Promise((r) => setTimeout(r, 1500));
    const { frame, reply } = await sendPoints(client, encoders.teltonika, { ...ctx, serial: 2 }, [route().next()]);
    expect(encoders.teltonika.isAck(reply, frame, 1)).toBe(true);
    expect(h.gateway.stats.loginTimeouts).toBe(0);
  });
});

describe('caps', () => {
  it('reads the soft open-file limit the shell reports, and keeps a reserve below it', () => {
    const shell = Number(execFileSync('sh', ['-c', 'ulimit -Sn'], { encoding: 'utf8' }).trim());
    const limit = readFileLimit();
    expect(limit).toEqual({ soft: shell, source: 'proc' });
    expect(parseFileLimit('Max open files            unlimited            unlimited            files')).toBe(1_000_000);
    expect(readFileLimit(() => { throw new Error('ENOENT'); })).toEqual({ soft: 1024, source: 'assumed' });
    expect(reservedDescriptors(20_000)).toBe(4_000);
    expect(reservedDescriptors(1024)).toBe(256);
  });

  it('keeps the total below the open-file limit less the reserve', async () => {
    // A limit of 300 leaves 300 - 256 = 44 connections for devices.
    h = await startGatewayHarness({ fileLimit: { soft: 300, source: 'proc' }, maxTotalConnections: 1000 });
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => open(h!.ports.gt06, `127.0.0.${10 + (i % 5)}`)));
    await until(() => all.filter((c) => c.closed).length === 6, 10_000, '6 connections closed');
    expect(h.gateway.openConnections).toBe(44);
    expect(h.gateway.stats.connectionsRejected.total_cap).toBe(6);
  });

  it('holds more connections than the cap from one slow sender while /healthz answers and another device gets its acks', async () => {
    const captured = capturingLogger('warn');
    p = await startPlatformHarness(
      { FLEET_MAX_CONNECTIONS_PER_ADDRESS: '50', FLEET_MAX_TOTAL_CONNECTIONS: '60', FLEET_LOGIN_TIMEOUT_S: '60' },
      captured.log,
    );
    const gateway = p.platform.gateway!;
    const ports = p.platform.ports;
    // 200 connections from 127.0.0.1, spread over the three ports, each dripping a byte every 300 ms.
    const attackers: TcpClient[] = [];
    for (let i = 0; i < 200; i++) attackers.push(await open([ports.teltonika, ports.gt06, ports.jt808][i % 3]!));
    const drip = setInterval(() => {
      for (const a of attackers) if (!a.closed) a.send(Buffer.from([0x78]));
    }, 300);
    try {
      await until(() => attackers.filter((a) => a.closed).length === 150, 20_000, '150 attacker connections closed');
      expect(gateway.metrics().openConnections).toBe(50);

      const health = await fetch(`${p.base}/healthz`);
      expect(health.status).toBe(200);

      await p.registerDevice({ imei: IMEI });
      const device = await open(ports.teltonika!, '127.0.0.2');
      const ctx: EncodeContext = { imei: IMEI, terminalId: '', serial: 1 };
      await login(device, encoders.teltonika, ctx);
      const { frame, reply } = await sendPoints(device, encoders.teltonika, { ...ctx, serial: 2 }, [route().next()]);
      expect(encoders.teltonika.isAck(reply, frame, 1)).toBe(true);

      // The total cap (60) holds against a third address: 50 + 1 open, 9 more fit.
      const others = await Promise.all(Array.from({ length: 20 }, () => open(ports.gt06!, '127.0.0.3')));
      await until(() => others.filter((c) => c.closed).length === 11, 10_000, '11 connections over the total closed');
      expect(gateway.metrics().openConnections).toBe(60);
      expect(attackers.filter((a) => !a.closed)).toHaveLength(50);

      const metrics = await (await fetch(`${p.base}/metrics`)).text();
      const rejected = (reason: string) => Number(new RegExp(`^fleet_gateway_connections_rejected_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
      expect(rejected('address_cap') + rejected('address_backoff')).toBe(150);
      expect(rejected('total_cap')).toBe(11);
      expect((await fetch(`${p.base}/healthz`)).status).toBe(200);
    } finally {
      clearInterval(drip);
    }
    // Said in the log, but not once per refused connection.
    const capLines = captured.lines.filter((l) => l.includes('connection cap reached'));
    expect(capLines.length).toBeGreaterThan(0);
    expect(capLines.length).toBeLessThan(20);
    expect(capLines.some((l) => l.includes('"reason":"address_cap"') && l.includes('"maxPerAddress":50'))).toBe(true);
  });
});
