/**
 * The position history's thread yields the cores to the process's other threads: on Linux,
 * once it has caught up with the log, it raises its own nice value, and leaves every other
 * thread's alone. It still keeps the history.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { historyItemEncoderModule } from '../../api/history-item-module.js';
import { loadConfig } from '../../core/config.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import { streams } from '../../core/streams.js';
import { historyDbPath, openHistoryReads } from '../../projections/history/database.js';
import { HistoryThread } from '../../projections/history/thread.js';
import { positionRecorded } from '../support/store-events.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-history-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each thread of this process and its nice value (field 19 of its stat, after the command's parentheses). */
function niceByThread(): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      nice.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nice;
}

const onLinux = process.platform === 'linux';
/** This process's own nice value (its main thread's): a run under `nice` starts every thread there. */
const processNice = onLinux ? niceByThread().get(process.pid)! : 0;

// Above 10 already, the history's thread cannot lower itself to 10 (that would be raising its priority).
describe.runIf(onLinux && processNice < 10)('the history thread', () => {
  it('runs at a lower priority than the rest of the process, and keeps the history', async () => {
    const config = loadConfig({ FLEET_DATA_DIR: dir, FLEET_LOG_LEVEL: 'silent' });
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    const reads = openHistoryReads(historyDbPath(dir));
    const before = niceByThread();
    const failures: Error[] = [];
    const history = await HistoryThread.start(config, historyItemEncoderModule, (err) => failures.push(err));
    try {
      const after = niceByThread();
      const lowered = [...after].filter(([, nice]) => nice > processNice).map(([tid]) => tid);
      // The history's own thread; nothing that ran before it.
      expect(lowered).toHaveLength(1);
      expect(lowered.every((tid) => !before.has(tid))).toBe(true);
      expect(lowered.every((tid) => after.get(tid) === 10)).toBe(true);
      expect([...before.keys()].filter((tid) => after.has(tid)).every((tid) => after.get(tid) === before.get(tid))).toBe(true);

      const device = { customerId: 'cus_1', deviceId: 'dev_1' };
      const { position } = await store.appendToStream(streams.telemetry(device.deviceId), [positionRecorded(device, Date.UTC(2026, 10, 27, 8))]);
      await history.waitFor(position);
      expect(reads.position()).toEqual(position);
      expect(failures).toEqual([]);
    } finally {
      await history.stop();
      reads.close();
      await store.close();
    }
  });
});
