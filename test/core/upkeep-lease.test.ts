import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openLog } from '../../core/event-store/sqlite-schema.js';
import { LEASE_MS, LEASE_RENEW_MS, UpkeepLease } from '../../core/event-store/sqlite-upkeep-lease.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the upkeep lease: one upkeep thread per log', () => {
  // Two connections to one log, as two upkeep threads have; times are given, not read from a clock.
  const path = join(dir, 'lease.sqlite');
  const first = openLog(path);
  const second = openLog(path);
  afterAll(() => {
    first.close();
    second.close();
  });
  const a = new UpkeepLease(first, 'a');
  const b = new UpkeepLease(second, 'b');
  const t0 = 1_000_000;

  it('goes to the first thread that looks; the other does no upkeep while it is renewed', () => {
    expect(a.holds(t0)).toBe(true);
    expect(b.holds(t0)).toBe(false);
    for (let t = t0 + LEASE_RENEW_MS; t <= t0 + 3 * LEASE_MS; t += LEASE_RENEW_MS) {
      expect(a.holds(t)).toBe(true);
      expect(b.holds(t)).toBe(false);
    }
  });

  it('is taken over once its holder has not renewed it for LEASE_MS (a process killed), and the old holder stops', () => {
    const lastRenewal = t0 + 3 * LEASE_MS;
    expect(b.holds(lastRenewal + LEASE_MS - LEASE_RENEW_MS)).toBe(false);
    expect(b.holds(lastRenewal + LEASE_MS)).toBe(true);
    // The old holder finds out at its next look and stops.
    expect(a.holds(lastRenewal + LEASE_MS + LEASE_RENEW_MS)).toBe(false);
  });

  it('is taken at the next look once its holder released it (its store closed)', () => {
    const now = t0 + 10 * LEASE_MS;
    expect(b.holds(now)).toBe(true);
    expect(a.holds(now)).toBe(false);
    b.release();
    expect(b.holds(now)).toBe(false);
    expect(a.holds(now + LEASE_RENEW_MS)).toBe(true);
    expect(b.holds(now + 2 * LEASE_RENEW_MS)).toBe(false);
  });
});
