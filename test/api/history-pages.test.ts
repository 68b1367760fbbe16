/**
 * The history pages' thread (api/history-pages.ts): pages come back as the query reads them
 * in this thread, a page that cannot be read fails with the reason while the thread reads
 * on, and closing answers the pages already asked for first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HistoryPages } from '../../api/history-pages.js';
import { historyPage, type HistoryPageQuery } from '../../api/queries/positions.js';
import { historyProjection, openHistoryDb } from '../../projections/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function historyFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-history-pages-'));
  dirs.push(dir);
  return join(dir, 'history.sqlite');
}

const T0 = Date.UTC(2026, 10, 20);

/** `count` fixes of one device a second apart, applied by the history's projection, each item a small JSON object. */
function seed(path: string, count: number): void {
  const db = openHistoryDb(path);
  const handler = historyProjection((fix) => JSON.stringify({ n: (fix.fix_time - T0) / 1_000 })).prepare(db);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const data = { device_id: 'dev_a', customer_id: 'cus_a', fix_time: T0 + 1_000 * i, lat: 56.9, lng: 24.1, speed_kmh: 0 };
      handler({ type: 'PositionRecorded', id: `evt-${String(i).padStart(4, '0')}`, data } as unknown as Parameters<typeof handler>[0]);
    }
    handler.flush?.();
  })();
  db.close();
}

const query = (over: Partial<HistoryPageQuery> = {}): HistoryPageQuery => ({
  customerId: 'cus_a', deviceId: 'dev_a', from: 0, to: 2e12, after: null, limit: 10, order: 'asc', ...over,
});

describe('history pages read in their own thread', () => {
  it('answer what the query reads in this thread, page after page', async () => {
    const path = historyFile();
    seed(path, 25);
    const pages = new HistoryPages(path);
    const local = openHistoryDb(path);
    try {
      let after: HistoryPageQuery['after'] = null;
      const seen: string[] = [];
      for (;;) {
        const page = await pages.read(query({ after }));
        const expected = historyPage(local, query({ after }));
        expect(page.items?.toString()).toBe(expected.items?.toString());
        expect(page.next).toEqual(expected.next);
        seen.push(page.items!.toString());
        if (!page.next) break;
        after = page.next;
      }
      expect(JSON.parse(`[${seen.join(',')}]`)).toEqual(Array.from({ length: 25 }, (_, n) => ({ n })));
      // Another customer's query of the same device reads nothing.
      expect(await pages.read(query({ customerId: 'cus_b' }))).toEqual({ items: null, next: null });
    } finally {
      local.close();
      await pages.close();
    }
  });

  it('fail the page when the history cannot be read, and read the next once it can', async () => {
    const path = historyFile();
    const pages = new HistoryPages(path);
    try {
      // No database yet: the page fails with SQLite's reason (the route answers a 500 problem).
      await expect(pages.read(query())).rejects.toThrow(/unable to open database file|no such file/i);
      seed(path, 3);
      const page = await pages.read(query());
      expect(page.items?.toString()).toBe('{"n":0},{"n":1},{"n":2}');
    } finally {
      await pages.close();
    }
  });

  it('answer the pages already asked for before closing, and refuse later ones', async () => {
    const path = historyFile();
    seed(path, 5);
    const pages = new HistoryPages(path);
    const asked = [pages.read(query({ limit: 1 })), pages.read(query({ limit: 2 })), pages.read(query({ limit: 5 }))];
    await pages.close();
    const answered = await Promise.all(asked);
    expect(answered.map((p) => p.items?.toString())).toEqual(['{"n":0}', '{"n":0},{"n":1}', '{"n":0},{"n":1},{"n":2},{"n":3},{"n":4}']);
    await expect(pages.read(query())).rejects.toThrow(/closed/);
  });
});
