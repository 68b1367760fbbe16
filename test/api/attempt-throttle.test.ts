import { describe, expect, it, vi } from 'vitest';
import { AttemptThrottle, LOGIN_LIMITS, isRefusal, type Attempt, type Refusal } from '../../api/attempt-throttle.js';
import { ManualClock } from '../../core/clock.js';

const { maxFailures, windowMs } = LOGIN_LIMITS;

function begun(a: Attempt | Refusal): Attempt {
  if (isRefusal(a)) throw new Error(`refused for ${a.retryAfterS} s`);
  return a;
}
const refusedFor = (a: Attempt | Refusal) => (isRefusal(a) ? a.retryAfterS : null);

describe('AttemptThrottle', () => {
  it('blocks a key after 5 failures until 15 minutes after its first, then counts afresh', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new AttemptThrottle(clock);
    for (let i = 0; i < maxFailures - 1; i++) begun(throttle.begin(['email:a@x', 'address:1'])).failed();
    clock.advance(60_000);
    begun(throttle.begin(['email:a@x', 'address:1'])).failed();
    expect(refusedFor(throttle.begin(['email:a@x']))).toBe((windowMs - 60_000) / 1000);
    expect(refusedFor(throttle.begin(['email:b@x', 'address:1']))).toBe((windowMs - 60_000) / 1000);
    begun(throttle.begin(['email:b@x', 'address:2'])).abandon();
    clock.advance(windowMs - 60_000);
    const fresh = begun(throttle.begin(['email:a@x', 'address:1']));
    fresh.failed();
    begun(throttle.begin(['email:a@x'])).abandon();
  });

  it("a right password clears its email's failures, not its address's", () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new AttemptThrottle(clock);
    for (let i = 0; i < maxFailures - 1; i++) begun(throttle.begin(['email:a@x', 'address:1'])).failed();
    begun(throttle.begin(['email:a@x', 'address:1'])).succeeded(['email:a@x']);
    begun(throttle.begin(['email:a@x', 'address:1'])).failed();
    begun(throttle.begin(['email:a@x'])).abandon();
    expect(refusedFor(throttle.begin(['address:1']))).toBe(windowMs / 1000);
  });

  it('counts attempts in flight: at most 5 at once per key, the rest refused at once; a success or a fault frees its slot', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new AttemptThrottle(clock);
    const tries = Array.from({ length: 40 }, () => throttle.begin(['email:a@x', `address:${Math.random()}`]));
    const inFlight = tries.filter((t): t is Attempt => !isRefusal(t));
    expect(inFlight).toHaveLength(maxFailures);
    expect(tries.filter(isRefusal).map((r) => r.retryAfterS)).toEqual(Array(40 - maxFailures).fill(1));
    // Settling twice counts once; a fault counts nothing.
    inFlight[0]!.abandon();
    inFlight[0]!.failed();
    inFlight[1]!.succeeded();
    const next = begun(throttle.begin(['email:a@x']));
    for (const t of [...inFlight.slice(2), next]) t.failed();
    expect(refusedFor(throttle.begin(['email:a@x']))).toBe(null);
  });

  it('N attempts at once never get more than 5 failures in: the sixth waits for the window', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new AttemptThrottle(clock);
    const first = Array.from({ length: maxFailures }, () => begun(throttle.begin(['email:a@x'])));
    expect(refusedFor(throttle.begin(['email:a@x']))).toBe(1);
    for (const t of first) t.failed();
    expect(refusedFor(throttle.begin(['email:a@x']))).toBe(windowMs / 1000);
  });

  it('a throttle of other limits (OAuth client secrets) blocks after its own count', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new AttemptThrottle(clock, { maxFailures: 10, windowMs: 60_000 });
    for (let i = 0; i < 9; i++) begun(throttle.begin(['client:c'])).failed();
    begun(throttle.begin(['client:c'])).failed();
    expect(refusedFor(throttle.begin(['client:c']))).toBe(60);
  });

  it('sweeps a map of live keys now and then, not at every attempt', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new AttemptThrottle(clock);
    const sweep = vi.spyOn(throttle as unknown as { sweep(now: number): void }, 'sweep');
    // A spray of one failure per email, all inside their window: nothing can be swept.
    for (let i = 0; i < 30_000; i++) begun(throttle.begin([`email:${i}@spray.example`])).failed();
    expect(sweep.mock.calls.length).toBeLessThanOrEqual(2);
    clock.advance(windowMs);
    begun(throttle.begin(['email:late@x'])).failed();
    for (let i = 0; i < 20_000; i++) begun(throttle.begin([`email:${i}@second.example`])).failed();
    // Once the first spray's windows ended, a sweep clears them.
    expect((throttle as unknown as { keys: Map<string, unknown> }).keys.size).toBeLessThan(30_000);
  });
});
