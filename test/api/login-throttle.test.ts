import { describe, expect, it } from 'vitest';
import { LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS, LoginThrottle } from '../../api/login-throttle.js';
import { ManualClock } from '../../core/clock.js';

describe('LoginThrottle', () => {
  it('blocks a key after 5 failures until 15 minutes after its first, then counts afresh', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new LoginThrottle(clock);
    for (let i = 0; i < LOGIN_MAX_FAILURES - 1; i++) throttle.failed(['email:a@x', 'address:1']);
    expect(throttle.retryAfterS(['email:a@x'])).toBeNull();
    clock.advance(60_000);
    throttle.failed(['email:a@x', 'address:1']);
    expect(throttle.retryAfterS(['email:a@x'])).toBe((LOGIN_WINDOW_MS - 60_000) / 1000);
    expect(throttle.retryAfterS(['email:b@x', 'address:1'])).toBe((LOGIN_WINDOW_MS - 60_000) / 1000);
    expect(throttle.retryAfterS(['email:b@x', 'address:2'])).toBeNull();
    clock.advance(LOGIN_WINDOW_MS - 60_000);
    expect(throttle.retryAfterS(['email:a@x', 'address:1'])).toBeNull();
    throttle.failed(['email:a@x']);
    expect(throttle.retryAfterS(['email:a@x'])).toBeNull();
  });

  it("a right password clears its email's failures, not its address's", () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const throttle = new LoginThrottle(clock);
    for (let i = 0; i < LOGIN_MAX_FAILURES - 1; i++) throttle.failed(['email:a@x', 'address:1']);
    throttle.succeeded('email:a@x');
    throttle.failed(['email:a@x', 'address:1']);
    expect(throttle.retryAfterS(['email:a@x'])).toBeNull();
    expect(throttle.retryAfterS(['address:1'])).toBe(LOGIN_WINDOW_MS / 1000);
  });
});
