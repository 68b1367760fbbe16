/**
 * Durability: the server is killed with SIGKILL in the middle of a simulator
 * run and restarted on the same ports. Every record whose ack a device
 * received must be in the store exactly once.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { runSimulation } from '../simulator/run.js';
import { freePorts } from '../support/ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'fleet-crash-'));
let server: ChildProcess | null = null;

afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startServer(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Fleet platform is running')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

describe('crash recovery', () => {
  it('keeps every acknowledged record exactly once across a SIGKILL', async () => {
    const [http, teltonika, gt06, jt808] = await freePorts(4);
    const env = {
      ...process.env,
      FLEET_DATA_DIR: dir,
      FLEET_HTTP_PORT: String(http),
      FLEET_TELTONIKA_PORT: String(teltonika),
      FLEET_GT06_PORT: String(gt06),
      FLEET_JT808_PORT: String(jt808),
      FLEET_HTTP_HOST: '127.0.0.1',
      FLEET_GATEWAY_HOST: '127.0.0.1',
      FLEET_LOG_LEVEL: 'warn',
    };
    const created = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', 'Crash Test', '--plan', 'pro', '--json'], {
      env,
      encoding: 'utf8',
    });
    expect(created.status, created.stderr).toBe(0);
    const { api_key: apiKey } = JSON.parse(created.stdout) as { customer_id: string; api_key: string };

    server = await startServer(env);
    const acked: Array<{ deviceId: string; fixTime: number }> = [];
    const simulation = runSimulation({
      protocol: 'teltonika',
      host: '127.0.0.1',
      port: teltonika!,
      devices: 20,
      intervalMs: 0,
      durationS: 5,
      pointsPerFrame: 3,
      ackTimeoutMs: 1500,
      api: { url: `http://127.0.0.1:${http}`, apiKey },
      onAck: (device, points) => {
        for (const p of points) acked.push({ deviceId: device.deviceId!, fixTime: p.fixTime });
      },
    });
    // Let traffic flow, then kill the server mid-run and bring it back on the same ports.
    await new Promise((r) => setTimeout(r, 1500));
    const beforeKill = acked.length;
    server.kill('SIGKILL');
    await new Promise((r) => server!.once('exit', r));
    server = await startServer(env);
    const summary = await simulation;
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
    server = null;

    expect(beforeKill).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(beforeKill);
    expect(summary.reconnects).toBeGreaterThan(0);

    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
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
