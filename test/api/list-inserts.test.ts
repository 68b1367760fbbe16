/**
 * Walking a list page by page while rows are added between the calls: every
 * row that sorts after the cursor shows up exactly once, none repeats, and a
 * row that sorts before the cursor waits for the next walk. API keys and
 * OAuth clients are in id order (ids start with their creation time); the
 * feed is in commit order, so whatever is committed during a walk comes at
 * its end, however old the event.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { raiseSos } from '../support/store-events.js';

interface Page {
  data: Array<Record<string, unknown>>;
  pagination: { next_cursor: string | null; has_more: boolean };
}

let h: ApiHarness;
let headers: Record<string, string>;
let customerId: string;

beforeEach(async () => {
  h = await startApiHarness();
  const customer = await h.newCustomer('Inserts Logistics');
  customerId = customer.customerId;
  headers = { authorization: `Bearer ${customer.apiKey}` };
});
afterEach(async () => {
  await h.close();
});

async function get(url: string): Promise<Page> {
  const res = await h.app.inject({ method: 'GET', url, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

/** Follows next_cursor from the first page until has_more is false; `between` runs after each page that has more. */
async function walk(url: string, idField: string, between: (pageNumber: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let pageNumber = 1; ; pageNumber++) {
    const page = await get(cursor ? `${url}&cursor=${cursor}` : url);
    seen.push(...page.data.map((row) => row[idField] as string));
    if (!page.pagination.has_more) return seen;
    cursor = page.pagination.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    await between(pageNumber);
  }
}

async function create(url: string, payload: Record<string, unknown>, idField: string): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url, headers, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json()[idField] as string;
}

const ID_ORDERED_LISTS = [
  { list: '/v1/api-keys', idField: 'id', payload: (n: number) => ({ name: `Key ${n}`, scopes: ['devices:read'] }) },
  { list: '/v1/oauth/clients', idField: 'client_id', payload: (n: number) => ({ name: `Client ${n}`, scopes: ['events:read'] }) },
];

for (const { list, idField, payload } of ID_ORDERED_LISTS) {
  describe(`GET ${list}`, () => {
    it.each([1, 2])('limit=%i: rows created after the first page appear once if they sort after the cursor', async (limit) => {
      const add = async (n: number) => {
        h.clock.advance(1000);
        return create(list, payload(n), idField);
      };
      const before = (await get(`${list}?limit=200`)).data.map((row) => row[idField] as string);
      for (let n = 0; n < 4; n++) before.push(await add(n));
      const start = h.clock.now();

      let later = '';
      let earlier = '';
      const walked = await walk(`${list}?limit=${limit}`, idField, async (pageNumber) => {
        if (pageNumber !== 1) return;
        later = await add(10); // newest id: after the cursor
        h.clock.set(start - 3_600_000);
        earlier = await add(11); // an id older than the first page: before the cursor
        h.clock.set(start);
      });

      expect(walked).toEqual([...before, later].sort());
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked).not.toContain(earlier);
      // The earlier row exists: the next walk from the start shows it, with everything else.
      expect((await get(`${list}?limit=200`)).data.map((row) => row[idField])).toEqual([...before, later, earlier].sort());
    });
  });
}

describe('GET /v1/feed', () => {
  it('events committed between pages, however old, come once at the end of the walk', async () => {
    const device = await create('/v1/devices', { imei: imeiFrom('35693803564380'), model: 'FMB920' }, 'id');
    const ref = { customerId, deviceId: device };
    const t = h.clock.now();
    const committed: string[] = [];
    for (let i = 0; i < 5; i++) committed.push(await raiseSos(h, ref, t - 60_000 * (5 - i)));

    const walked = await walk('/v1/feed?limit=2', 'id', async (pageNumber) => {
      // A new event, then one that happened before everything listed so far (a late upload).
      if (pageNumber === 1) committed.push(await raiseSos(h, ref, t));
      if (pageNumber === 2) committed.push(await raiseSos(h, ref, t - 86_400_000));
    });

    expect(committed).toHaveLength(7);
    expect(walked).toEqual(committed);
    const sequences = (await get('/v1/feed?limit=200')).data.map((e) => e.sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(7);
  });
});
