/**
 * A full disk: the data directory is on a 40 MB tmpfs, a filler file takes all but a few MB,
 * and simulated units fill the rest. /readyz must answer 503 naming the store while appends
 * fail, turn ready by itself once the filler is deleted (and the tmpfs grown), and every acked
 * record must be in the log. Needs root (mount); skipped, saying why, without it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultLogPath } from '../../core/config.js';
import type { EventToAppend, RecordedEvent } from '../../core/event-store/port.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { StoreWriteError } from '../../core/event-store/write-health.js';
import { runSimulation } from '../simulator/run.js';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';
import { eventually, until } from '../support/wait.js';

const DISK_MB = 40;
/** Left free by the filler: the units' records fill it within seconds. */
const LEFT_FREE_MB = 4;
/** Generous bounds for a loaded 2-core machine: they only bound a failing run. */
const LONG_MS = 90_000;

/** Why this machine cannot run the test, or null: it mounts (and unmounts) a scratch tmpfs to find out. */
function whyNotRunnable(): string | null {
  if (process.platform !== 'linux') return 'full-disk test skipped: it mounts a tmpfs, which needs Linux';
  if (process.getuid?.() !== 0) return 'full-disk test skipped: mounting a small tmpfs needs root (CI runs it as root)';
  const scratch = mkdtempSync(join(tmpdir(), 'fleet-mount-check-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', scratch], { stdio: 'pipe' });
    execFileSync('umount', [scratch], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `full-disk test skipped: mount is not permitted here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const skipReason = whyNotRunnable();
if (skipReason) console.warn(skipReason);

// Set up in the suite's beforeAll, so a skipped run creates nothing.
let mountPoint = '';
let dataDir = '';
let filler = '';
let mounted = false;
let server: PlatformProcess | null = null;

/** Takes all but `leaveMb` of the filesystem's free space (real pages: tmpfs allocates what is written). */
function fill(leaveMb: number): void {
  const { bavail, bsize } = statfsSync(mountPoint);
  let left = bavail * bsize - leaveMb * 1024 * 1024;
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  const fd = openSync(filler, 'w');
  try {
    while (left > 0) left -= writeSync(fd, chunk, 0, Math.min(chunk.length, left));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err; // full already: what was asked
  } finally {
    closeSync(fd);
  }
}

interface Readiness {
  status: number;
  body: { status?: string; errors?: Array<{ pointer: string; message: string }>; detail?: string };
}

describe.skipIf(skipReason !== null)('a full disk', () => {
  beforeAll(() => {
    mountPoint = mkdtempSync(join(tmpdir(), 'fleet-full-disk-'));
    dataDir = join(mountPoint, 'data');
    filler = join(mountPoint, 'filler');
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_MB}m`, 'tmpfs', mountPoint], { stdio: 'pipe' });
    mounted = true;
  });

  // Unmounted even when a test failed (lazily: a process that is still dying may hold a file).
  afterAll(async () => {
    await server?.stop('SIGKILL');
    if (mounted) spawnSync('umount', ['-l', mountPoint]);
    if (mountPoint) rmSync(mountPoint, { recursive: true, force: true });
  });

  it('makes a SQLite store reject appends with SQLITE_FULL, keeping what it committed, until there is room', async () => {
    const dir = join(mountPoint, 'store');
    mkdirSync(dir);
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    // The log stores any JSON: events of a type of the test's own, sized as it needs.
    const event = (data: unknown) => ({ id: randomUUID(), type: 'FillerWritten', data }) as unknown as EventToAppend;
    try {
      await store.appendToStream('s-1', [event({ n: 1 })]);
      fill(0);
      // A megabyte of events needs more WAL than the open and one small append left allocated.
      const big = Array.from({ length: 64 }, (_, i) => event({ n: i, pad: 'x'.repeat(16_000) }));
      const err = await store.appendToStream('s-1', big).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreWriteError);
      expect((err as StoreWriteError).code).toBe('SQLITE_FULL');
      rmSync(filler);
      await store.probeWrite();
      await store.appendToStream('s-1', big);
      expect((await store.readStream('s-1')).length).toBe(65);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers /readyz 503 naming the store while it cannot write, is ready again once there is room, and keeps every acked record', async () => {
    mkdirSync(dataDir);
    const { env, ports } = await platformEnv(dataDir);
    const base = `http://127.0.0.1:${ports.http}`;
    const created = spawnSync(process.execPath, [MAIN, 'customer', 'create', '--name', 'Full Disk', '--plan', 'pro', '--json'], { env, encoding: 'utf8' });
    expect(created.status, created.stderr).toBe(0);
    const { api_key: apiKey } = JSON.parse(created.stdout) as { api_key: string };
    server = await startPlatformProcess(env);
    const readiness = async (): Promise<Readiness> => {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, body: (await res.json()) as Readiness['body'] };
    };
    const metrics = async () => (await fetch(`${base}/metrics`)).text();

    const acked: Array<{ deviceId: string; fixTime: number }> = [];
    let lastAckAt = 0;
    const stop = new AbortController();
    const simulation = runSimulation({
      protocol: 'teltonika',
      host: '127.0.0.1',
      port: ports.teltonika,
      devices: 20,
      intervalMs: 0,
      durationS: 600,
      signal: stop.signal,
      pointsPerFrame: 5,
      ackTimeoutMs: 3000,
      api: { url: base, apiKey },
      onAck: (device, points) => {
        lastAckAt = performance.now();
        for (const p of points) acked.push({ deviceId: device.deviceId!, fixTime: p.fixTime });
      },
    });
    try {
      await until(() => acked.length > 500, 'records acked before the disk fills', LONG_MS);
      expect((await readiness()).status).toBe(200);
      fill(LEFT_FREE_MB);

      // The units fill the rest; acks stop, and /readyz says the store cannot write.
      const notReady = await eventually(
        async () => {
          const r = await readiness();
          return r.status === 503 && r.body.errors?.some((e) => e.pointer === '/checks/store') ? r : undefined;
        },
        '/readyz answering 503 for the store',
        LONG_MS,
      );
      const secondsTo503 = (performance.now() - lastAckAt) / 1000;
      expect(notReady.body.errors).toEqual([{ pointer: '/checks/store', message: 'not_writable' }]);
      expect(notReady.body.detail).toContain('SQLITE_FULL');
      // Held full while the units keep trying: the failures come to one line with a count per interval.
      const answers = new Map<number, number>();
      await until(
        async () => {
          const r = await readiness();
          answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
          return /store appends failing: [\d,]+ in the last \d+ s: SQLITE_FULL/.test(server!.output());
        },
        'the interval line of failed appends',
        LONG_MS,
      );
      const whileFull = await metrics();
      expect(whileFull).toMatch(/^fleet_store_writable 0$/m);
      expect(whileFull).toMatch(/^fleet_store_write_failures_total\{code="SQLITE_FULL"\} [1-9]\d*$/m);
      const ackedWhileFull = acked.length;

      // Room again, and plenty: the units, sending as fast as they are acked, must not fill it once more before they stop.
      rmSync(filler);
      execFileSync('mount', ['-o', 'remount,size=400m', mountPoint], { stdio: 'pipe' });
      const freedAt = performance.now();
      await until(async () => (await readiness()).status === 200, '/readyz ready again after the filler is gone', LONG_MS);
      const secondsToReady = (performance.now() - freedAt) / 1000;
      expect(await metrics()).toMatch(/^fleet_store_writable 1$/m);
      await until(() => acked.length > ackedWhileFull + 200, 'acks after the disk has room again', LONG_MS);
      stop.abort();
      await simulation;

      // One line about the store turning unwritable, none per failed append.
      const log = server.output();
      const failedAppends = Number(/^fleet_store_write_failures_total\{code="SQLITE_FULL"\} (\d+)$/m.exec(whileFull)![1]);
      expect(log).toContain('event store cannot write (SQLITE_FULL)');
      expect(log).not.toContain('append failed; closing without ack');
      expect(log.match(/event store cannot write/g)?.length).toBe(1);
      console.info(`/readyz while full: ${[...answers].map(([status, n]) => `${n}x ${status}`).join(', ')}`);
      await server.stop();
      server = null;

      const stored = await storedFixes(defaultLogPath(dataDir));
      const missing = acked.filter((a) => !stored.has(`${a.deviceId}@${a.fixTime}`));
      const duplicated = acked.filter((a) => (stored.get(`${a.deviceId}@${a.fixTime}`) ?? 0) > 1);
      console.info(
        `full disk: 503 ${secondsTo503.toFixed(1)} s after the last ack before it, ready ${secondsToReady.toFixed(1)} s after the filler went; ` +
          `${acked.length} records acked, ${stored.size} stored, ${missing.length} acked but missing; ${failedAppends} appends failed while full; log ${log.length} bytes`,
      );
      expect(missing).toEqual([]);
      expect(duplicated).toEqual([]);
    } finally {
      stop.abort();
      await simulation.catch(() => {});
    }
  }, 300_000);
});

/** How many times each `device@fixTime` is in the log's PositionRecorded events. */
async function storedFixes(path: string): Promise<Map<string, number>> {
  const store = new SqliteEventStore(path);
  const counts = new Map<string, number>();
  try {
    let after: RecordedEvent['position'] | undefined;
    for (;;) {
      const batch = await store.readAll({ ...(after ? { after } : {}), maxCount: 5000 });
      if (batch.length === 0) break;
      after = batch[batch.length - 1]!.position;
      for (const e of batch) {
        if (e.type !== 'PositionRecorded') continue;
        const d = e.data as { device_id: string; fix_time: number };
        const key = `${d.device_id}@${d.fix_time}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
  } finally {
    await store.close();
  }
  return counts;
}
