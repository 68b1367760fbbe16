/**
 * Durability: the server is killed with SIGKILL in the middle of a simulator
 * run and restarted on the same ports. Every record whose ack a device
 * received must be in the store exactly once.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultLogPath } from '../../core/config.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { runSimulation } from '../simulator/run.js';
import { until } from '../support/device-login.js';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-crash-'));
let server: PlatformProcess | null = null;

afterAll(async () => {
  await server?.stop('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('crash recovery', () => {
  it('keeps every acknowledged record exactly once across a SIGKILL', async () => {
    const { env, ports } = await platformEnv(dir);
    const created = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', 'Crash Test', '--plan', 'pro', '--json'], {
      env,
      encoding: 'utf8',
    });
    expect(created.status, created.stderr).toBe(0);
    const { api_key: apiKey } = JSON.parse(created.stdout) as { customer_id: string; api_key: string };

    server = await startPlatformProcess(env);
    const acked: Array<{ deviceId: string; fixTime: number }> = [];
    // The run ends once records were acked after the restart (a slow restart on a loaded machine only makes it longer).
    const stop = new AbortController();
    const simulation = runSimulation({
      protocol: 'teltonika',
      host: '127.0.0.1',
      port: ports.teltonika,
      devices: 20,
      intervalMs: 0,
      durationS: 120,
      signal: stop.signal,
      pointsPerFrame: 3,
      ackTimeoutMs: 1500,
      api: { url: `http://127.0.0.1:${ports.http}`, apiKey },
      onAck: (device, points) => {
        for (const p of points) acked.push({ deviceId: device.deviceId!, fixTime: p.fixTime });
      },
    });
    // Let traffic flow, then kill the server mid-run and bring it back on the same ports.
    await new Promise((r) => setTimeout(r, 1500));
    const beforeKill = acked.length;
    await server.stop('SIGKILL');
    server = await startPlatformProcess(env);
    await until(() => acked.length > beforeKill + 200, 60_000, 'records acked after the restart');
    stop.abort();
    const summary = await simulation;
    await server.stop();
    server = null;

    expect(beforeKill).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(beforeKill);
    expect(summary.reconnects).toBeGreaterThan(0);

    const store = new SqliteEventStore(defaultLogPath(dir));
    const positions: RecordedEvent[] = [];
    let after: RecordedEvent['position'] | undefined;
    for (;;) {
      const batch = await store.readAll({ ...(after ? { after } : {}), maxCount: 5000 });
      if (batch.length === 0) break;
      after = batch[batch.length - 1]!.position;
      positions.push(...batch.filter((e) => e.type === 'PositionRecorded'));
    }
    await store.close();
    const counts = new Map<string, number>();
    for (const e of positions) {
      const d = e.data as { device_id: string; fix_time: number };
      const key = `${d.device_id}@${d.fix_time}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const missing = acked.filter((a) => !counts.has(`${a.deviceId}@${a.fixTime}`));
    const duplicated = acked.filter((a) => (counts.get(`${a.deviceId}@${a.fixTime}`) ?? 0) > 1);
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
  }, 60_000);
});
