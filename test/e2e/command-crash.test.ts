/**
 * Commands across kill -9, the platform as users start it (`dist/main.js` in a child process):
 * a command queued for an offline unit, then SIGKILL before any gateway sent it, is sent once
 * after the restart. A SIGKILL after it was sent and before the unit answered leaves its outcome
 * unknown: it is sent once more (attempt 2, the documented retry-once rule), never a third time.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { defaultLogPath } from '../../core/config.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { protocols } from '../../gateway/protocols/index.js';
import { teltonikaEncoder } from '../simulator/encoders/teltonika.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { nextFrame } from '../support/command-unit.js';
import { loadFrames } from '../support/conformance.js';
import { login, sendPoints, until } from '../support/device-login.js';
import { bearerApi } from '../support/platform-harness.js';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { TcpClient } from '../support/tcp-client.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-command-crash-'));
let server: PlatformProcess | null = null;
afterAll(async () => {
  await server?.stop('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A unit's login, then the first frame the gateway writes to it. */
async function loginAndReceive(port: number, ctx: EncodeContext): Promise<{ client: TcpClient; frame: Buffer }> {
  const client = await TcpClient.open(port);
  await login(client, teltonikaEncoder, ctx);
  return { client, frame: await nextFrame(client, protocols.teltonika, 20_000) };
}

it('sends a command queued before a SIGKILL once after the restart, and one lost in flight once more', async () => {
  const { env, ports } = await platformEnv(dir);
  const created = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', 'Command Crash', '--plan', 'pro', '--json'], { env, encoding: 'utf8' });
  expect(created.status, created.stderr).toBe(0);
  const api = bearerApi(`http://127.0.0.1:${ports.http}`, (JSON.parse(created.stdout) as { api_key: string }).api_key);
  const imei = imeiFrom('35209307600099');
  const ctx: EncodeContext = { imei, terminalId: imei.slice(3), serial: 1 };

  server = await startPlatformProcess(env);
  const device = await api('POST', '/v1/devices', { imei, model: 'FMB920' });
  expect(device.status).toBe(201);
  const queued = await api('POST', `/v1/devices/${device.json.id}/commands`, { type: 'custom', params: { text: 'getinfo' } });
  expect(queued.status).toBe(202);
  await server.stop('SIGKILL');

  server = await startPlatformProcess(env);
  const first = await loginAndReceive(ports.teltonika, ctx);
  expect(first.frame.toString('latin1')).toContain('getinfo');
  await until(async () => (await api('GET', `/v1/commands/${queued.json.id}`)).json.status === 'sent', 20_000, 'the command sent');
  // Killed before the unit answered: nobody knows whether it ran.
  await server.stop('SIGKILL');
  first.client.close();

  server = await startPlatformProcess(env);
  const second = await loginAndReceive(ports.teltonika, ctx);
  expect(second.frame.toString('hex')).toBe(first.frame.toString('hex'));
  second.client.send(Buffer.from(loadFrames()[18]!.hex, 'hex'));
  await until(async () => (await api('GET', `/v1/commands/${queued.json.id}`)).json.status === 'succeeded', 20_000, 'the command succeeded');
  // Nothing more was written: the next bytes are the ack of a record.
  const point = { fixTime: Math.floor(Date.now() / 1000) * 1000, lat: 54.68, lng: 25.27, speedKmh: 0, headingDeg: 0, altitudeM: 110, satellites: 9, ignition: false, odometerM: 1000 };
  const { frame, reply } = await sendPoints(second.client, teltonikaEncoder, ctx, [point]);
  expect(teltonikaEncoder.isAck(reply, frame, 1)).toBe(true);
  second.client.close();
  await server.stop();
  server = null;

  const store = new SqliteEventStore(defaultLogPath(dir));
  const events = await store.readStream(streams.commands(device.json.id));
  await store.close();
  expect(events.map((e) => e.type)).toEqual(['DeviceCommandQueued', 'DeviceCommandSent', 'DeviceCommandSent', 'DeviceCommandSucceeded']);
  expect(events.filter((e) => e.type === 'DeviceCommandSent').map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
});
