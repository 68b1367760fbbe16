/**
 * The driver's current `score`: the 7 UTC days ending with the customer's
 * newest day of driving. Days before that window drop out, days in it count,
 * and neither a parked vehicle's fixes nor a fix dated years ahead move it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { raiseDeviceEvent, recordPosition } from '../support/store-events.js';

let h: ApiHarness;
beforeEach(async () => {
  h = await startApiHarness();
});
afterEach(async () => {
  await h.close();
});

const DAY_MS = 86_400_000;
const MIN = 60_000;
/** The newest day with driving: 2026-11-20. */
const ANCHOR = Date.UTC(2026, 10, 20);
const KM_LAT = 1 / 111.195;

async function fleet() {
  const { customerId, apiKey } = await h.newCustomer();
  const headers = { authorization: `Bearer ${apiKey}` };
  const post = async (url: string, payload: object) => (await h.app.inject({ method: 'POST', url, headers, payload })).json();
  const get = async (url: string) => (await h.app.inject({ method: 'GET', url, headers })).json();
  const anna = await post('/v1/drivers', { name: 'Anna' });
  const van = await post('/v1/devices', { imei: imeiFrom('35693803564380'), model: 'GT06N', name: 'Van 7', driver_id: anna.id });
  const device = { customerId, deviceId: van.id as string };
  const fix = (fixTime: number, lat: number, speed: number, receivedAt = fixTime) =>
    recordPosition(h, device, fixTime, { protocol: 'gt06', received_at: receivedAt, lat, speed_kmh: speed });
  /** 10 km north at 60 km/h from 09:00 on the day `daysBefore` the anchor, with `brakes` harsh brakes. */
  const driveDay = async (daysBefore: number, brakes: number) => {
    const start = ANCHOR - daysBefore * DAY_MS + 9 * 60 * MIN;
    for (let i = 0; i <= 10; i++) await fix(start + i * MIN, 56.9 + i * KM_LAT, 60);
    for (let b = 1; b <= brakes; b++) {
      await raiseDeviceEvent(h, device, start + b * 30_000, { kind: 'event.harsh_brake', severity: 'medium', driver_id: anna.id });
    }
  };
  const score = async () => (await get(`/v1/drivers/${anna.id}`)).score as number | null;
  return { fix, driveDay, score, get, anna };
}

/** docs/api-decisions.md: 100 − Σ weight × count × 100 / km; a harsh brake weighs 2. */
const expected = (km: number, brakes: number) => 100 - (2 * brakes * 100) / km;

describe('current driver score window', () => {
  it('covers the anchor day and the 6 before it; days 7 and more before drop out', async () => {
    const { driveDay, score, get, anna } = await fleet();
    await driveDay(10, 4);
    await driveDay(7, 3); // the day just before the window
    await driveDay(6, 1); // the first day of the window
    await driveDay(0, 0); // the anchor
    expect(await score()).toBeCloseTo(expected(20, 1), 1);
    expect((await get('/v1/drivers')).data[0]).toMatchObject({ id: anna.id, score: await score() });
  });

  it('is not moved by a later day of parked fixes, nor by a fix dated years ahead', async () => {
    const { fix, driveDay, score } = await fleet();
    await driveDay(6, 1);
    await driveDay(0, 0);
    const inWindow = await score();
    expect(inWindow).toBeCloseTo(expected(20, 1), 1);
    // Two days later the van stands in the yard: fixes, but no distance.
    for (let i = 0; i <= 5; i++) await fix(ANCHOR + 2 * DAY_MS + i * MIN, 56.9, 0);
    expect(await score()).toBe(inWindow);
    // A GPS clock gone wrong, received just after the parked fixes.
    await fix(Date.UTC(2030, 0, 1), 56.9, 0, ANCHOR + 2 * DAY_MS + 6 * MIN);
    expect(await score()).toBe(inWindow);
  });
});
