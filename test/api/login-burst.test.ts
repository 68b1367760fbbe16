/**
 * Logins sent at once, over a real HTTP server (each case from loopback
 * addresses of its own) on the harness's manual clock: a burst cannot get more
 * than the allowed failures past the throttle, and cannot hold up other
 * addresses' logins behind its password checks.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../../api/attempt-throttle.js';
import { createCustomer } from '../../core/commands/customers.js';
import { sha256Hex } from '../../core/credentials.js';
import type { EventStore } from '../../core/event-store/port.js';
import { streams } from '../../core/streams.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { requestFrom, type HttpAnswer } from '../support/http-from.js';
import { until } from '../support/wait.js';

const PASSWORD = 'a long enough password';
let h: ApiHarness;
let base: string;

beforeAll(async () => {
  h = await startApiHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h.close();
});

const login = (email: string, password: string, from: string) => requestFrom(base, 'POST', '/v1/sessions', { body: { email, password }, from });

async function newUser(email: string): Promise<void> {
  await createCustomer(h.store, h.clock, { name: email, plan: 'pro', first_user: { email, name: 'Admin', password: PASSWORD } });
}

const statuses = (answers: HttpAnswer[]) => answers.map((a) => a.status).sort();
const count = (answers: HttpAnswer[], status: number) => answers.filter((a) => a.status === status).length;

function expectThrottled(a: HttpAnswer): void {
  expect(a.status).toBe(429);
  expect(a.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(a.json).toMatchObject({ status: 429, code: 'too_many_login_attempts' });
  expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(a.headers['set-cookie']).toBeUndefined();
}

describe('logins sent at once', () => {
  it('40 wrong passwords at once for one email: at most 5 are checked (401), the rest 429; the right one waits for the window', async () => {
    await newUser('burst@fleet.example');
    // Ten addresses, four each: the email's count is the one that limits.
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => login('burst@fleet.example', `guess ${i}`, `127.0.1.${i % 10}`)));
    expect(count(burst, 401)).toBeLessThanOrEqual(LOGIN_LIMITS.maxFailures);
    expect(count(burst, 401) + count(burst, 429), String(statuses(burst))).toBe(40);
    for (const a of burst.filter((b) => b.status === 429)) expectThrottled(a);

    // The right password is refused until the window of those failures ends.
    const refused = await login('burst@fleet.example', PASSWORD, '127.0.1.20');
    expectThrottled(refused);
    expect(Number(refused.headers['retry-after'])).toBe(LOGIN_LIMITS.windowMs / 1000);
    h.clock.advance(LOGIN_LIMITS.windowMs - 1000);
    expectThrottled(await login('burst@fleet.example', PASSWORD, '127.0.1.20'));
    h.clock.advance(1000);
    const after = await login('burst@fleet.example', PASSWORD, '127.0.1.20');
    expect(after.status, after.text).toBe(201);
  });

  it("a burst from one address holds at most 5 checks in flight, and another address's login succeeds while they are held", async () => {
    await newUser('other@fleet.example');
    // The burst's password checks are held where they start (the read of the email's claim),
    // so what is in flight can be counted: the test decides when they end, not the machine's speed.
    const otherStream = streams.userEmail(sha256Hex('other@fleet.example').slice(0, 32));
    const store = h.store as EventStore;
    const read = store.readStream.bind(store);
    let held = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    store.readStream = async (stream, options) => {
      if (stream.startsWith(streams.userEmail('')) && stream !== otherStream) {
        held++;
        await gate;
      }
      return read(stream, options);
    };
    try {
      const answered: HttpAnswer[] = [];
      const burst = Array.from({ length: 100 }, (_, i) =>
        login(`sprayed${i}@fleet.example`, 'wrong password', '127.0.2.1').then((a) => {
          answered.push(a);
          return a;
        }),
      );
      await until(() => answered.length + held === 100, 'every login of the burst answered or held');
      expect(held).toBeLessThanOrEqual(LOGIN_LIMITS.maxFailures);
      for (const a of answered) expectThrottled(a);

      // While the burst's checks are held: another address logs in; the burst's address is refused at once.
      const other = await login('other@fleet.example', PASSWORD, '127.0.2.2');
      expect(other.status, other.text).toBe(201);
      expectThrottled(await login('other@fleet.example', PASSWORD, '127.0.2.1'));

      release();
      const all = await Promise.all(burst);
      expect(count(all, 401)).toBe(held);
      expect(count(all, 429)).toBe(100 - held);
    } finally {
      release();
      store.readStream = read;
    }
  });
});
