/**
 * The platform as users start it (`node dist/main.js`, every role) with its
 * events in a real PostgreSQL server: units of the three protocols are acked,
 * their fixes reach the latest positions, and a restart keeps them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { runSimulation } from '../simulator/run.js';
import { eventually } from '../support/wait.js';

let pg: PostgresServer;
let platform: PlatformProcess | null = null;
const dir = mkdtempSync(join(tmpdir(), 'fleet-pg-e2e-'));

beforeAll(async () => {
  pg = await startPostgresServer();
  await pg.createDatabase('fleet_e2e');
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the platform on PostgreSQL', () => {
  it('acks units of every protocol, serves their fixes, and keeps them over a restart', async () => {
    const { env, ports } = await platformEnv(dir, { FLEET_STORE: pg.url('fleet_e2e') });
    platform = await startPlatformProcess(env);
    expect(platform.output()).toContain('store:       postgres://postgres:***@');
    const created = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', 'PG Logistics', '--plan', 'pro', '--json'], { env, encoding: 'utf8' });
    expect(created.status, created.stderr).toBe(0);
    const apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const apiUrl = `http://127.0.0.1:${ports.http}`;

    let acked = 0;
    const lastFix = new Map<string, string>();
    for (const protocol of ['teltonika', 'gt06', 'jt808'] as const) {
      const summary = await runSimulation({
        protocol, host: '127.0.0.1', port: ports[protocol], devices: 2, intervalMs: 0, framesPerDevice: 3, pointsPerFrame: 2,
        api: { url: apiUrl, apiKey },
        onAck: (device, points) => lastFix.set(device.deviceId!, new Date(points.at(-1)!.fixTime).toISOString()),
      });
      expect(summary.refused).toBe(0);
      expect(summary.ackedFrames).toBe(6);
      acked += summary.ackedFrames;
    }
    expect(acked).toBe(18);

    const latest = async () => {
      const res = await fetch(`${apiUrl}/v1/positions/latest`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Array<{ device_id: string; timestamp: string }> }).data;
    };
    expect(lastFix.size).toBe(6);
    // Every device's last acked fix is its latest position once the projections caught up.
    const before = await eventually(async () => {
      const items = await latest();
      return items.length === 6 && items.every((i) => lastFix.get(i.device_id) === i.timestamp) ? items : undefined;
    }, 'every acked fix projected');

    await platform.stop();
    platform = await startPlatformProcess(env);
    const after = await eventually(async () => {
      const items = await latest();
      return items.length === 6 ? items : undefined;
    }, 'the six devices again after a restart');
    expect(after).toEqual(before);
  }, 120_000);
});
