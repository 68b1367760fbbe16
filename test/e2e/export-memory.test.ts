/**
 * An export of 1,000,000 fixes streams in constant memory: the history is
 * seeded straight through the history projection (as its runner writes it,
 * much faster than over TCP), the platform runs as a process of its own, and
 * its RSS is read from /proc while a slow client downloads CSV, GPX and KML.
 * A server that buffered instead of waiting for the socket would hold the
 * whole file (about 100 MB). Each file is parsed back: csv-parse, and
 * fast-xml-parser's well-formedness check with the GPX 1.1 / KML 2.2 shape.
 *
 * The first exports of a fresh platform grow its API thread's young
 * generation to its working size (up to 96 MB, core/role-thread.ts), as
 * any busy period does: that happens once, whatever the size. So two days of
 * each format are exported first, and what the million then adds is measured.
 */
import { parse as parseCsv } from 'csv-parse';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyItemJson } from '../../api/history-item.js';
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { registerDevice } from '../../core/commands/devices.js';
import { defaultLogPath } from '../../core/config.js';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { imeiFrom } from '../../core/imei.js';
import { historyDbPath, historyProjection, openHistoryDb } from '../../projections/index.js';
import { procUsage } from '../bench/proc-usage.js';
import { platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';

const FIXES = 1_000_000;
const RSS_RISE_MAX_MB = 50;
/** One fix every 2 s: a million in 23 days, inside the history's 31-day window. */
const STEP_MS = 2000;
const T0 = Date.UTC(2026, 9, 1);

const dir = mkdtempSync(join(tmpdir(), 'fleet-export-memory-'));
let platform: PlatformProcess;
let base: string;
let headers: Record<string, string>;
let deviceId: string;

/** Writes the fixes as the history's runner would, in transactions of 50,000. */
function seedHistory(dataDir: string, customerId: string): void {
  const db = openHistoryDb(historyDbPath(dataDir));
  const handle = historyProjection(historyItemJson).prepare(db);
  const chunk = 50_000;
  for (let from = 0; from < FIXES; from += chunk) {
    db.transaction(() => {
      for (let i = from; i < from + chunk; i++) {
        const t = T0 + i * STEP_MS;
        handle({
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          type: 'PositionRecorded',
          stream: `telemetry-${deviceId}`,
          revision: BigInt(i),
          position: { commit: BigInt(i), prepare: BigInt(i) },
          metadata: {},
          created: t,
          data: {
            device_id: deviceId, customer_id: customerId, protocol: 'teltonika', fix_time: t, received_at: t + 500, valid: true,
            lat: 56.9 + (i % 10_000) / 100_000, lng: 24.1 + (i % 9_973) / 100_000, speed_kmh: i % 110, heading_deg: i % 360,
            altitude_m: 10 + (i % 50), satellites: 9, ignition: i % 3 !== 0, odometer_m: i * 10, attributes: {},
          },
        } as RecordedEvent);
      }
      handle.flush?.();
    })();
  }
  db.close();
}

beforeAll(async () => {
  const dataDir = join(dir, 'data');
  const store = new SqliteEventStore(defaultLogPath(dataDir), { synchronous: 'OFF' });
  const customer = await createCustomer(store, systemClock, { name: 'Export Fleet', plan: 'enterprise' });
  deviceId = (await registerDevice(store, systemClock, { customer_id: customer.customer_id, imei: imeiFrom('35693803564380'), model: 'FMB920' })).device_id;
  await store.close();
  seedHistory(dataDir, customer.customer_id);
  const { env, ports } = await platformEnv(dataDir);
  platform = await startPlatformProcess(env, [], [], 120_000);
  base = `http://127.0.0.1:${ports.http}`;
  headers = { authorization: `Bearer ${customer.api_key}` };
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const window = (days = 31) => `device_id=${deviceId}&from=${new Date(T0).toISOString()}&to=${new Date(T0 + days * 86_400_000 - 1).toISOString()}`;

/**
 * Downloads `path` reading slower than the server writes (a pause every MB), and hands
 * each chunk to `take`; resolves with how far the server's RSS rose above what it was before.
 */
async function download(path: string, take: (chunk: Buffer) => void): Promise<{ riseMb: number; bytes: number; contentType: string | null }> {
  const pid = platform.child.pid!;
  const before = procUsage(pid).rssMb;
  let highest = before;
  const sampler = setInterval(() => (highest = Math.max(highest, procUsage(pid).rssMb)), 50);
  try {
    const res = await fetch(base + path, { headers });
    expect(res.status).toBe(200);
    let bytes = 0;
    let sinceLastPause = 0;
    for await (const chunk of Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>)) {
      const buf = chunk as Buffer;
      bytes += buf.length;
      sinceLastPause += buf.length;
      take(buf);
      if (sinceLastPause > 1 << 20) {
        sinceLastPause = 0;
        await new Promise((r) => setTimeout(r, 40));
      }
    }
    highest = Math.max(highest, procUsage(pid).rssMb);
    return { riseMb: highest - before, bytes, contentType: res.headers.get('content-type') };
  } finally {
    clearInterval(sampler);
  }
}

describe('exporting 1,000,000 fixes', () => {
  it('streams CSV, GPX and KML with the server RSS rising by less than 50 MB, each parsing as its format', async () => {
    // Two days of each format first (86,400 fixes): the thread that reads pages starts, and the young generation grows.
    for (const format of ['csv', 'gpx', 'kml']) {
      const warm = await download(`/v1/positions?${window(2)}&format=${format}`, () => {});
      expect(warm.bytes).toBeGreaterThan(0);
    }

    let rows = 0;
    let lastTimestamp = '';
    const csv = parseCsv({ columns: true });
    csv.on('data', (row: { timestamp: string }) => {
      rows += 1;
      lastTimestamp = row.timestamp;
    });
    const csvDone = new Promise<void>((resolve, reject) => {
      csv.on('end', resolve);
      csv.on('error', reject);
    });
    const csvRun = await download(`/v1/positions?${window()}&format=csv`, (chunk) => csv.write(chunk));
    csv.end();
    await csvDone;
    expect(rows).toBe(FIXES);
    expect(lastTimestamp).toBe(new Date(T0 + (FIXES - 1) * STEP_MS).toISOString());
    expect(csvRun.contentType).toBe('text/csv; charset=utf-8');
    expect(csvRun.riseMb, `RSS rose by ${csvRun.riseMb.toFixed(1)} MB over ${(csvRun.bytes / 1e6).toFixed(0)} MB of CSV`).toBeLessThan(RSS_RISE_MAX_MB);

    for (const format of ['gpx', 'kml'] as const) {
      const parts: Buffer[] = [];
      const run = await download(`/v1/positions?${window()}&format=${format}`, (chunk) => parts.push(chunk));
      expect(run.riseMb, `RSS rose by ${run.riseMb.toFixed(1)} MB over ${(run.bytes / 1e6).toFixed(0)} MB of ${format}`).toBeLessThan(RSS_RISE_MAX_MB);
      const text = Buffer.concat(parts).toString('utf8');
      parts.length = 0;
      expect(XMLValidator.validate(text)).toBe(true);
      const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false }).parse(text);
      if (format === 'gpx') {
        expect(doc.gpx['@version']).toBe('1.1');
        expect(doc.gpx.trk.trkseg.trkpt).toHaveLength(FIXES);
        expect(doc.gpx.trk.trkseg.trkpt[FIXES - 1].time).toBe(new Date(T0 + (FIXES - 1) * STEP_MS).toISOString());
      } else {
        expect(doc.kml['@xmlns']).toBe('http://www.opengis.net/kml/2.2');
        expect(String(doc.kml.Document.Placemark.LineString.coordinates).trim().split('\n')).toHaveLength(FIXES);
      }
    }
  }, 600_000);
});
