import { describe, expect, it } from 'vitest';
import { SendWindow } from '../../webhook-delivery/send-window.js';

/** Sends taken at each ms step while the window allows, from `from` to `to`. */
function sendGreedily(w: SendWindow, from: number, to: number, step = 1): number[] {
  const sent: number[] = [];
  for (let t = from; t < to; t += step) while (w.take(t)) sent.push(t);
  return sent;
}

describe('send window', () => {
  it('never lets more than the limit into any one-second window, however the sends fall', () => {
    const w = new SendWindow(10);
    const sent = sendGreedily(w, 0, 5000, 7);
    for (const t of sent) expect(sent.filter((u) => u > t - 1000 && u <= t).length).toBeLessThanOrEqual(10);
    // And it is the limit, not less: 10 in each of the five seconds.
    expect(sent).toHaveLength(50);
  });

  it('lets the sends a pause held back go as soon as the last second has room for them', () => {
    const w = new SendWindow(100);
    expect(sendGreedily(w, 0, 1, 1)).toHaveLength(100);
    expect(w.room(999)).toBe(0);
    // A pause of the sender from 0 to 1,500 ms: nothing is lost, the whole limit is there again.
    expect(w.room(1500)).toBe(100);
  });

  it('refuses without recording, and a new limit keeps the newest sends', () => {
    const w = new SendWindow(3);
    for (const t of [0, 100, 200]) expect(w.take(t)).toBe(true);
    expect(w.take(300)).toBe(false);
    expect(w.room(300)).toBe(0);
    const smaller = w.resized(2);
    expect(smaller.limit).toBe(2);
    expect(smaller.room(1050)).toBe(0);
    // The sends at 100 and 200 were kept: at 1,100 the first of them has left the window.
    expect(smaller.room(1100)).toBe(1);
    const larger = w.resized(5);
    expect(larger.room(300)).toBe(2);
  });
});
