/**
 * List bodies are built in pooled buffers (api/send-serialized.ts). Over real sockets:
 * a client that stops reading mid-response must still get its own bytes intact while
 * other tenants' pages are built and sent meanwhile: a buffer is never reused early.
 * The server listens on a Unix socket, whose small kernel buffer leaves most of a stalled
 * ~0.9 MB body in the server's write queue (loopback TCP would absorb it all).
 */
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
const DEVICES = 700;
// Long names make each page ~0.9 MB.
const LONG_NAME = 'x'.repeat(1000);

let h: ApiHarness;
const socketDir = mkdtempSync(join(tmpdir(), 'fleet-pool-'));
const socketPath = join(socketDir, 'api.sock');
const tenants: Array<{ customerId: string; apiKey: string; marker: string }> = [];

async function seedFleet(customerId: string, marker: string, offset: number): Promise<void> {
  const appends: Array<Promise<{ position: { commit: bigint } }>> = [];
  for (let i = 0; i < DEVICES; i++) {
    const deviceId = newId('dev', T0 + offset + i);
    appends.push(
      h.store.appendToStream(streams.device(deviceId), [
        {
          id: randomUuid(),
          type: 'DeviceRegistered',
          data: {
            device_id: deviceId, customer_id: customerId, imei: imeiFrom(String(35000000000000 + offset + i)), model: 'FMB920',
            name: `${marker} ${i} ${LONG_NAME}`, group_id: null, driver_id: null, terminal_id: null, created_at: T0,
          },
        },
      ]),
      h.store.appendToStream(streams.telemetry(deviceId), [
        {
          id: randomUuid(),
          type: 'PositionRecorded',
          data: {
            device_id: deviceId, customer_id: customerId, protocol: 'teltonika', fix_time: T0, received_at: T0 + 500, valid: true,
            lat: 56.9, lng: 24.1, speed_kmh: 50, heading_deg: 90, altitude_m: 12, satellites: 11, ignition: true, odometer_m: 100,
            attributes: {},
          },
        },
      ]),
    );
  }
  const results = await Promise.all(appends);
  await h.runner.waitFor(results[results.length - 1]!.position as never);
}

beforeAll(async () => {
  h = await startApiHarness({ settings: { rateLimits: { plans: { pro: { perMinute: 1e6, burst: 1e6 } } } } });
  for (const [i, marker] of ['Alpha', 'Bravo'].entries()) {
    const c = await h.newCustomer(`Tenant ${marker}`);
    tenants.push({ ...c, marker });
    await seedFleet(c.customerId, marker, i * DEVICES);
  }
  await h.app.listen({ path: socketPath });
}, 60_000);
afterAll(async () => {
  await h.close();
  rmSync(socketDir, { recursive: true, force: true });
});

/** Sends a GET on a raw socket and resolves with the body once the response is complete; `stallMs` delays reading. */
function rawGet(path: string, apiKey: string, stallMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const chunks: Buffer[] = [];
    socket.on('error', reject);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      resolve(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    });
    if (stallMs > 0) {
      socket.pause();
      setTimeout(() => socket.resume(), stallMs);
    }
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`);
  });
}

describe('pooled list bodies over real sockets', () => {
  it('a stalled reader gets its own page intact while other tenants are served meanwhile', async () => {
    const [alpha, bravo] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    const stalled = rawGet('/v1/positions/latest?limit=1000', alpha.apiKey, 500);
    const others = await Promise.all(
      Array.from({ length: 40 }, (_, i) => rawGet('/v1/positions/latest?limit=1000', (i % 2 ? alpha : bravo).apiKey)),
    );
    for (const [i, body] of others.entries()) {
      const marker = (i % 2 ? alpha : bravo).marker;
      const data = (JSON.parse(body) as { data: Array<{ device_name: string }> }).data;
      expect(data).toHaveLength(DEVICES);
      expect(data.every((p) => p.device_name.startsWith(`${marker} `))).toBe(true);
    }
    const page = JSON.parse(await stalled) as { data: Array<{ device_name: string }> };
    expect(page.data).toHaveLength(DEVICES);
    expect(page.data.every((p) => p.device_name.startsWith('Alpha '))).toBe(true);
  });
});
