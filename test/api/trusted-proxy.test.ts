/**
 * Behind a reverse proxy every login comes from the proxy's address: with the proxy trusted
 * (FLEET_TRUST_PROXY) the throttle counts each client's forwarded address, and without it a
 * client's own X-Forwarded-For changes nothing (so it cannot dodge the per-address count).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../../api/attempt-throttle.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

let h: ApiHarness;
afterEach(() => h.close());

async function wrongLogins(forwardedFor: (i: number) => string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await h.app.inject({
      method: 'POST', url: '/v1/sessions', remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': forwardedFor(i) }, payload: { email: `user${i}@fleet.example`, password: 'wrong password' },
    });
    statuses.push(res.statusCode);
  }
  return statuses;
}

describe('the client address of the login throttle', () => {
  it('is the forwarded one when the proxy is trusted', async () => {
    h = await startApiHarness({ settings: { trustProxy: ['127.0.0.1'] } });
    // One wrong login each from many clients behind the proxy: none is held by the others' failures.
    const statuses = await wrongLogins((i) => `203.0.113.${i + 1}`, LOGIN_LIMITS.maxFailures + 3);
    expect(statuses.every((s) => s === 401)).toBe(true);
  });

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', async () => {
    h = await startApiHarness();
    const statuses = await wrongLogins((i) => `203.0.113.${i + 1}`, LOGIN_LIMITS.maxFailures + 3);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LOGIN_LIMITS.maxFailures);
    expect(statuses.slice(LOGIN_LIMITS.maxFailures).every((s) => s === 429)).toBe(true);
  });
});
