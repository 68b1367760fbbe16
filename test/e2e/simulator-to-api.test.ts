/**
 * End to end, value by value: simulated Teltonika, GT06 and JT/T 808 units ->
 * gateway -> SQLite store -> projections -> GET /v1/positions/latest.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { silentLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { startPlatform, type RunningPlatform } from '../../main.js';
import type { SimPoint } from '../simulator/encoders/types.js';
import { runSimulation } from '../simulator/run.js';

let platform: RunningPlatform;
let apiKey: string;
let apiUrl: string;
const dir = mkdtempSync(join(tmpdir(), 'fleet-e2e-'));

beforeAll(async () => {
  const config = loadConfig({
    FLEET_DATA_DIR: dir,
    FLEET_SECRET_KEY: randomBytes(32).toString('base64'), // not a key file beside the temporary data dir, left behind in the temp directory
    FLEET_HTTP_PORT: '0',
    FLEET_TELTONIKA_PORT: '0',
    FLEET_GT06_PORT: '0',
    FLEET_JT808_PORT: '0',
    FLEET_HTTP_HOST: '127.0.0.1',
    FLEET_GATEWAY_HOST: '127.0.0.1',
  });
  platform = await startPlatform(config, ['gateway', 'projections', 'api'], silentLogger);
  apiKey = (await createCustomer(platform.store, systemClock, { name: 'E2E Logistics', plan: 'pro' })).api_key;
  apiUrl = `http://127.0.0.1:${platform.ports.http}`;
});

afterAll(async () => {
  await platform.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface LatestItem {
  device_id: string;
  device_name: string;
  lat: number;
  lng: number;
  speed_kmh: number;
  heading_deg: number;
  altitude_m: number;
  satellites: number;
  timestamp: string;
  ignition: boolean;
}

async function latest(): Promise<LatestItem[]> {
  const res = await fetch(`${apiUrl}/v1/positions/latest`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: LatestItem[] }).data;
}

describe('simulator -> gateway -> store -> API', () => {
  it.each(['teltonika', 'gt06', 'jt808'] as const)('%s units show up in /v1/positions/latest with the values they sent', async (protocol) => {
    const lastSent = new Map<string, SimPoint>();
    const summary = await runSimulation({
      protocol,
      host: '127.0.0.1',
      port: platform.ports[protocol]!,
      devices: 3,
      intervalMs: 0,
      framesPerDevice: 4,
      pointsPerFrame: 2,
      // No seed: the default fleets of the three protocols must not collide (the README's flow).
      api: { url: apiUrl, apiKey },
      onAck: (device, points) => lastSent.set(device.deviceId!, points[points.length - 1]!),
    });
    expect(summary.refused).toBe(0);
    expect(summary.ackedFrames).toBe(12);
    expect(lastSent.size).toBe(3);

    // Projections run behind the log: wait until they caught up with the last acked points.
    let items: LatestItem[] = [];
    const deadline = Date.now() + 5000;
    do {
      items = (await latest()).filter((i) => lastSent.has(i.device_id));
      const done = items.length === 3 && items.every((i) => i.timestamp === new Date(lastSent.get(i.device_id)!.fixTime).toISOString());
      if (done) break;
      await new Promise((r) => setTimeout(r, 50));
    } while (Date.now() < deadline);

    expect(items).toHaveLength(3);
    for (const item of items) {
      const sent = lastSent.get(item.device_id)!;
      expect(item.device_name).toMatch(new RegExp(`^Sim ${protocol} \\d$`));
      expect(item.timestamp).toBe(new Date(sent.fixTime).toISOString());
      expect(item.lat).toBeCloseTo(sent.lat, 5);
      expect(item.lng).toBeCloseTo(sent.lng, 5);
      expect(item.speed_kmh).toBeCloseTo(sent.speedKmh, 0);
      expect(item.heading_deg).toBe(sent.headingDeg);
      expect(item.ignition).toBe(sent.ignition);
      if (protocol !== 'gt06') {
        // GT06 location packets carry neither altitude nor a satellite count beyond 4 bits.
        expect(item.altitude_m).toBe(sent.altitudeM);
      }
      expect(item.satellites).toBe(sent.satellites);
    }
  });
});
