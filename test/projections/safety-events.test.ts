/**
 * Safety detection as fleet stories, through the pure detector:
 * given these fixes and alarms of one van, then these events.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { SqliteEventStore } from '../../core/event-store/sqlite.js';
import type { AlarmReported, DeviceEventRaised, PositionRecorded } from '../../core/events.js';
import { silentLogger } from '../../core/logger.js';
import { streams } from '../../core/streams.js';
import { ProjectionRunner, openReadModelDb, readModelProjections } from '../../projections/index.js';
import { THRESHOLDS, detect, initialState, type DetectorEnv, type DetectorEvent, type DetectorState } from '../../projections/safety-events/index.js';
import { headingChange } from '../../projections/safety-events/motion.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
const DEVICE = 'dev_01van7';
const CUSTOMER = 'cus_01acme';
const ENV: DetectorEnv = { driverId: 'drv_01anna', limitKmh: null };

type Raised = DeviceEventRaised['data'];

/** A valid fix `s` seconds into the story. */
function fix(s: number, speed: number | null, extra: Partial<PositionRecorded['data']> = {}): DetectorEvent {
  return {
    id: `pos-${s}`,
    type: 'PositionRecorded',
    data: {
      device_id: DEVICE, customer_id: CUSTOMER, protocol: 'teltonika', fix_time: T0 + s * 1000, received_at: T0 + s * 1000 + 500,
      valid: true, lat: 56.95 + s * 0.0001, lng: 24.1, speed_kmh: speed, heading_deg: 90, altitude_m: 10, satellites: 9,
      ignition: true, odometer_m: null, attributes: {}, ...extra,
    },
  };
}

function alarm(s: number, kind: AlarmReported['data']['kind'], extra: Partial<AlarmReported['data']> = {}): DetectorEvent {
  return {
    id: `alarm-${kind}-${s}`,
    type: 'AlarmReported',
    data: {
      device_id: DEVICE, customer_id: CUSTOMER, protocol: 'teltonika', kind, occurred_at: T0 + s * 1000, received_at: T0 + s * 1000 + 700,
      level: null, position: { lat: 56.95, lng: 24.1, speed_kmh: 50, heading_deg: 180 }, details: {}, ...extra,
    },
  };
}

/** Speeds at 1 Hz from second `start`. */
const drive = (start: number, speeds: number[], extra: Partial<PositionRecorded['data']> = {}) =>
  speeds.map((v, i) => fix(start + i, v, extra));

/** Runs a story; the state goes through JSON between events, as it does through its SQLite row. */
function run(events: DetectorEvent[], env: DetectorEnv = ENV, from: DetectorState = initialState()) {
  let state = from;
  const raised: Raised[] = [];
  const derived = [];
  for (const e of events) {
    const r = detect(state, e, env);
    state = JSON.parse(JSON.stringify(r.state)) as DetectorState;
    derived.push(...r.raised);
    raised.push(...r.raised.map((d) => d.event.data as Raised));
  }
  return { state, raised, derived };
}

/** A fix past the double-reporting window, so held detections come out. */
const later = (s: number, speed = 30) => fix(s + THRESHOLDS.dedupWindowMs / 1000 + 1, speed);

describe('harsh braking and acceleration from speed changes', () => {
  it('raises one harsh brake for a whole braking manoeuvre, with the signed speed change and its duration', () => {
    const braking = drive(0, [62, 60, 48, 36, 25, 22, 22]);
    const held = run(braking);
    expect(held.raised).toEqual([]); // waiting out the window in which the device could report it itself
    const { raised } = run([...braking, later(6)]);
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({
      kind: 'event.harsh_brake',
      source: 'server',
      severity: 'high', // |−35| > 25
      device_id: DEVICE,
      customer_id: CUSTOMER,
      driver_id: 'drv_01anna',
      occurred_at: T0 + 1000,
      position: { speed_kmh: 60, timestamp: T0 + 1000 },
      fields: { delta_kmh: -35, duration_ms: 3000 },
    });
    expect(raised[0]!.context).toMatchObject({ speed_before_kmh: 60, speed_after_kmh: 25, threshold_kmh_per_s: -11, peak_rate_kmh_per_s: -12 });
    expect(raised[0]!.event_id).toMatch(/^evt_[0-9a-z]{26}$/);
  });

  it('raises a harsh acceleration with a positive delta, and grades severity by its size', () => {
    const { raised } = run([...drive(0, [0, 10, 21, 30, 32]), later(4)]);
    expect(raised.map((r) => [r.kind, r.fields.delta_kmh, r.fields.duration_ms, r.severity])).toEqual([
      ['event.acceleration', 21, 2000, 'medium'],
    ]);
  });

  it('ignores gentle braking, a one-fix GNSS glitch, too short a burst, and fixes too far apart', () => {
    expect(run([...drive(0, [60, 55, 50, 45, 40]), later(4)]).raised).toEqual([]);
    expect(run([...drive(0, [20, 70, 20]), later(2)]).raised).toEqual([]); // 50 km/h in 1 s is not a car
    const halfSecond = [fix(0, 60), fix(0.5, 54), fix(1, 53), fix(1.5, 52)]; // −12 km/h/s for only 0.5 s
    expect(run([...halfSecond, later(2)]).raised).toEqual([]);
    expect(run([fix(0, 90), fix(6, 20), later(6)]).raised).toEqual([]); // 6 s gap: says nothing about one manoeuvre
  });
});

describe('cornering from heading change at speed', () => {
  it('raises one curve for a hard turn at speed, with direction and heading change in the context', () => {
    const turn = [0, 25, 50, 75, 80, 80].map((h, i) => fix(i, 40, { heading_deg: h }));
    const { raised } = run([...turn, later(5)]);
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({ kind: 'event.curve', fields: { delta_kmh: 0, duration_ms: 3000 }, occurred_at: T0 });
    expect(raised[0]!.context).toMatchObject({ direction: 'right', heading_change_deg: 75 });
  });

  it('works across north (350° → 15°) and leaves slow manoeuvring and gentle bends alone', () => {
    const acrossNorth = [300, 325, 350, 15, 20].map((h, i) => fix(i, 45, { heading_deg: h }));
    const r = run([...acrossNorth, later(4)]).raised;
    expect(r.map((e) => [e.kind, e.context.heading_change_deg, e.context.direction])).toEqual([['event.curve', 75, 'right']]);
    const parking = [0, 30, 60, 90].map((h, i) => fix(i, 15, { heading_deg: h }));
    expect(run([...parking, later(3)]).raised).toEqual([]);
    const bend = [0, 3, 6, 9].map((h, i) => fix(i, 90, { heading_deg: h }));
    expect(run([...bend, later(3)]).raised).toEqual([]);
    expect(headingChange(350, 10)).toBe(20);
    expect(headingChange(10, 350)).toBe(-20);
  });
});

describe('overspeed against the effective limit', () => {
  it('raises once at the onset, stays silent around the limit, and re-arms only below limit − margin', () => {
    const env = { ...ENV, limitKmh: 90 };
    const speeds = [80, 92, 100, 95, 88, 91, 84, 111, 112];
    const { raised } = run([...speeds.map((v, i) => fix(i * 5, v)), later(40)], env);
    expect(raised.map((r) => [r.kind, r.occurred_at - T0, r.fields, r.severity])).toEqual([
      ['event.overspeed', 5000, { limit_kmh: 90, delta_kmh: 2 }, 'medium'],
      ['event.overspeed', 35000, { limit_kmh: 90, delta_kmh: 21 }, 'high'], // 88 was not enough, 84 < 85 re-armed
    ]);
  });

  it('checks nothing without a limit', () => {
    expect(run([fix(0, 180), later(0)]).raised).toEqual([]);
  });

  const onsets = (events: DetectorEvent[]) =>
    run(events, { ...ENV, limitKmh: 90 }).raised.filter((r) => r.kind === 'event.overspeed').map((r) => r.occurred_at - T0);
  const gap = THRESHOLDS.overspeedRearmGapMs / 1000;

  it('re-arms after a pause in the fixes: the next trip\'s onset is reported even without a slow fix in between', () => {
    // Speeding when the fixes stop (tunnel, power cut, parked out of coverage), speeding again when they resume.
    expect(onsets([fix(0, 150), fix(60, 150), fix(60 + gap + 1, 150), later(60 + gap + 1)])).toEqual([0, (60 + gap + 1) * 1000]);
    // Fixes as far apart as that pause, but no further, are one drive.
    expect(onsets([fix(0, 150), fix(gap, 150), fix(2 * gap, 150), later(2 * gap)])).toEqual([0]);
  });

  it('re-arms when the ignition goes off, by a fix or by the device\'s alarm', () => {
    expect(onsets([fix(0, 150), fix(30, 150, { ignition: false }), fix(60, 150), later(60)])).toEqual([0, 60_000]);
    expect(onsets([fix(0, 150), alarm(30, 'event.ignition_off'), fix(60, 150), later(60)])).toEqual([0, 60_000]);
    expect(onsets([fix(0, 150), fix(30, 150), fix(60, 150), later(60)])).toEqual([0]);
  });

  it('is not re-armed by a late ignition-off from before the last fix (blind-area back-fill)', () => {
    expect(onsets([fix(0, 150), fix(30, 150), alarm(-3600, 'event.ignition_off'), fix(60, 150), later(60)])).toEqual([0]);
  });
});

describe('late and invalid fixes', () => {
  it('detects nothing from a fix older than the last processed one, and does not let it break the story', () => {
    const env = { ...ENV, limitKmh: 90 };
    const events = [...drive(10, [60, 60, 60]), fix(5, 0), fix(6, 150), fix(13, 60), later(13)];
    expect(run(events, env).raised).toEqual([]);
  });

  it('ignores a fix dated in the future, so the fixes after it are not taken for late ones', () => {
    const env = { ...ENV, limitKmh: 90 };
    const year2030 = fix(3, 0, { fix_time: Date.UTC(2030, 0, 1), received_at: T0 + 3000 });
    const { raised } = run([...drive(0, [80, 80, 80]), year2030, ...drive(10, [150, 130, 110, 95]), later(13)], env);
    expect(raised.map((r) => [r.kind, r.occurred_at - T0])).toEqual([
      ['event.overspeed', 10_000],
      ['event.harsh_brake', 10_000],
    ]);
  });

  it('ignores invalid fixes', () => {
    const events = [fix(0, 60), fix(1, 0, { valid: false }), fix(2, 60), fix(3, 180, { valid: false }), later(3)];
    expect(run(events, { ...ENV, limitKmh: 90 }).raised).toEqual([]);
  });
});

describe('device-reported alarms', () => {
  it('maps each alarm to its kind, severity and payload fields, keeping the raw details in the context', () => {
    const label = '3132333435363726112008000005' + '02' + '00'; // ... serial 05, 2 attachments, reserved
    const { raised } = run([
      alarm(1, 'alarm.adas.collision', { protocol: 'jt808', level: 2, details: { item: '0x64', alarm_id: 7, flag: 1, type: 1, label } }),
      alarm(2, 'alarm.dsm.fatigue', { protocol: 'jt808', level: 1, details: { item: '0x65', alarm_id: 8, flag: 0, type: 1, label } }),
      alarm(3, 'event.sos', { details: { priority: 2 } }),
      alarm(4, 'event.harsh_brake', { details: { io253: 2, io254: 41 } }),
      alarm(5, 'alarm.bsd', { protocol: 'jt808', details: { item: '0x67', alarm_id: 9, flag: 0, type: 2, label: 'ff' } }),
    ]);
    expect(raised.map((r) => [r.kind, r.severity, r.source, r.fields])).toEqual([
      ['alarm.adas.collision', 'critical', 'device', { alarm_level: 2, media_count: 2 }],
      ['alarm.dsm.fatigue', 'high', 'device', { alarm_level: 1, media_count: 2 }],
      ['event.sos', 'critical', 'device', {}],
      ['event.harsh_brake', 'medium', 'device', { delta_kmh: null, duration_ms: null }],
      ['alarm.bsd', 'medium', 'device', { alarm_level: null, media_count: 0 }],
    ]);
    expect(raised[3]!.context).toMatchObject({ protocol: 'teltonika', raw: { io253: 2, io254: 41 }, alarm_event_id: 'alarm-event.harsh_brake-4' });
    expect(raised[0]!.position).toEqual({ lat: 56.95, lng: 24.1, speed_kmh: 50, heading_deg: 180, timestamp: T0 + 1000 });
  });

  it('gives a device overspeed the limit and excess, and an alarm without location the last fix', () => {
    const { raised } = run([fix(0, 70), alarm(10, 'event.overspeed', { position: null }), alarm(20, 'event.overspeed')], { ...ENV, limitKmh: 40 });
    expect(raised[0]!.fields).toEqual({ limit_kmh: 40, delta_kmh: null });
    expect(raised[0]!.position).toMatchObject({ speed_kmh: 70, timestamp: T0 });
    expect(raised[0]!.context).toMatchObject({ position_source: 'last_fix' });
    expect(raised[1]!.fields).toEqual({ limit_kmh: 40, delta_kmh: 10 });
  });

  it('reports a JT/T 808 alarm bit once while it stays set, and again after a report without it', () => {
    const jt = { protocol: 'jt808' };
    const record = (s: number, bit: boolean) => [fix(s, 95, jt), ...(bit ? [alarm(s, 'event.overspeed', jt)] : [])];
    const { raised } = run([...record(0, true), ...record(10, true), ...record(20, true), ...record(30, false), ...record(40, true)]);
    expect(raised.filter((r) => r.source === 'device').map((r) => r.occurred_at - T0)).toEqual([0, 40000]);
  });

  it('reports a held JT/T 808 alarm bit once also from a clock years ahead (its reports grouped on their receipt time)', () => {
    const ahead = 4 * 365 * 86_400_000;
    const jt = (s: number) => ({ protocol: 'jt808', received_at: T0 + s * 1000 + 300 });
    const record = (s: number) => [
      fix(s, 95, { ...jt(s), fix_time: T0 + s * 1000 + ahead }),
      alarm(s, 'alarm.dsm.fatigue', { ...jt(s), occurred_at: T0 + s * 1000 + ahead }),
    ];
    const { raised } = run([...record(0), ...record(10), ...record(20), ...record(30)]);
    expect(raised.map((r) => [r.kind, r.occurred_at - T0])).toEqual([['alarm.dsm.fatigue', 300]]);
  });

  it('closes a trip on ignition off with its distance (odometer) and duration', () => {
    const { raised } = run([
      alarm(0, 'event.ignition_on'),
      ...[0, 60, 300, 600].map((s, i) => fix(s, 50, { odometer_m: 120_000 + i * 1700 })),
      fix(601, 0, { ignition: false, odometer_m: 125_200 }),
      alarm(601, 'event.ignition_off'),
      alarm(700, 'event.ignition_off'),
    ]);
    const offs = raised.filter((r) => r.kind === 'event.ignition_off');
    expect(offs.map((r) => [r.fields, r.severity])).toEqual([
      [{ trip_distance_km: 5.2, trip_duration_s: 601 }, 'info'],
      [{ trip_distance_km: null, trip_duration_s: null }, 'info'], // no trip start seen
    ]);
  });
});

describe('no double reporting', () => {
  const braking = drive(0, [62, 60, 48, 36, 25, 22, 22]);

  it('drops the server harsh brake when the device reports one just after it (same record order: fix, then alarm)', () => {
    const { raised } = run([...braking.slice(0, 5), alarm(4, 'event.harsh_brake'), ...braking.slice(5), later(6)]);
    expect(raised.map((r) => [r.kind, r.source])).toEqual([['event.harsh_brake', 'device']]);
  });

  it('drops it when the device reported one shortly before, and keeps it when that report was long ago', () => {
    const before = run([alarm(-5, 'event.harsh_brake'), ...braking, later(6)]).raised;
    expect(before.map((r) => r.source)).toEqual(['device']);
    const longAgo = run([alarm(-120, 'event.harsh_brake'), ...braking, later(6)]).raised;
    expect(longAgo.map((r) => r.source)).toEqual(['device', 'server']);
  });

  it('keeps working after an alarm or status dated years ahead (a device clock gone wrong)', () => {
    const ahead = { occurred_at: Date.UTC(2030, 0, 1), received_at: T0 } as const;
    const status: DetectorEvent = {
      id: 'status-2030',
      type: 'StatusReported',
      data: { device_id: DEVICE, customer_id: CUSTOMER, protocol: 'gt06', at: Date.UTC(2030, 0, 1), received_at: T0, ignition: true, attributes: {} },
    };
    for (const stray of [alarm(0, 'event.sos', ahead), status]) {
      // The server brake is still held, not released at once by a 2030 "now", and dropped for the device's own report after it.
      const { raised } = run([stray, ...braking, alarm(6, 'event.harsh_brake'), later(6)]);
      expect(raised.filter((r) => r.kind === 'event.harsh_brake').map((r) => r.source)).toEqual(['device']);
    }
    // The alarm itself is still reported: it is the device's.
    expect(run([alarm(0, 'event.sos', ahead)]).raised.map((r) => r.kind)).toEqual(['event.sos']);
  });

  it('does not hold a detection forever: a disconnect releases it', () => {
    const disconnect: DetectorEvent = {
      id: 'disc-1',
      type: 'DeviceDisconnected',
      data: { device_id: DEVICE, customer_id: CUSTOMER, connection_id: 'c1', reason: 'idle_timeout', last_seen_at: T0 + 6000, at: T0 + 606_000 },
    };
    expect(run([...braking, disconnect]).raised.map((r) => r.kind)).toEqual(['event.harsh_brake']);
  });
});

describe('deterministic ids', () => {
  it('derives the same ids from the same log, different ones from different causes', () => {
    const story = [
      ...drive(0, [62, 60, 48, 36, 25, 22, 22]),
      alarm(30, 'event.sos'),
      ...drive(40, [0, 10, 21, 30, 32]),
      later(44),
    ];
    const first = run(story).derived;
    const second = run(story).derived;
    expect(first.map((d) => [d.stream, d.event.id, (d.event.data as Raised).event_id])).toEqual(
      second.map((d) => [d.stream, d.event.id, (d.event.data as Raised).event_id]),
    );
    expect(first).toHaveLength(3);
    expect(new Set(first.map((d) => (d.event.data as Raised).event_id)).size).toBe(3);
    expect(first.every((d) => d.stream === `events-${DEVICE}`)).toBe(true);
  });
});

describe('replay through the runner', () => {
  it('applies a speed limit set between batches to the next fix (a device\'s limit is remembered across batches only until an event may change it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-safety-'));
    const store = new SqliteEventStore(join(dir, 'events.sqlite'), { clock: new ManualClock(T0), synchronous: 'OFF' });
    try {
      await store.appendToStream(streams.device(DEVICE), [
        {
          id: crypto.randomUUID(),
          type: 'DeviceRegistered',
          data: {
            device_id: DEVICE, customer_id: CUSTOMER, imei: '356307042441013', model: 'FMB920', name: 'Van 7', group_id: null,
            driver_id: null, terminal_id: null, created_at: T0,
          },
        },
      ]);
      const append = (events: DetectorEvent[]) => store.appendToStream(streams.telemetry(DEVICE), events.map((e) => ({ ...e, id: crypto.randomUUID() })));
      await append([fix(0, 120), fix(5, 80)]);
      // Two events per batch: the fixes above are looked up (no limit) in batches before the update.
      const runner = new ProjectionRunner(store, openReadModelDb(join(dir, 'rm.sqlite')), readModelProjections(), silentLogger, { maxBatch: 2 });
      await runner.catchUp();
      await store.appendToStream(streams.device(DEVICE), [
        { id: crypto.randomUUID(), type: 'DeviceUpdated', data: { device_id: DEVICE, customer_id: CUSTOMER, changes: { speed_limit_kmh: 90 }, updated_at: T0 + 6000 } },
      ]);
      await append([fix(10, 80), fix(15, 100), later(15)]);
      for (let i = 0; i < 3; i++) await runner.catchUp();
      const raised = runner.db.prepare("SELECT occurred_at, fields FROM device_events WHERE kind = 'event.overspeed'").all() as Array<{ occurred_at: number; fields: string }>;
      expect(raised.map((r) => [r.occurred_at - T0, JSON.parse(r.fields)])).toEqual([[15_000, { limit_kmh: 90, delta_kmh: 10 }]]);
      await runner.stop();
      runner.db.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rebuilding the read models from the log derives the same events and appends none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-safety-'));
    const store = new SqliteEventStore(join(dir, 'events.sqlite'), { clock: new ManualClock(T0), synchronous: 'OFF' });
    const rows = async (runner: ProjectionRunner) => {
      // Derived events make a round trip through the store: catch up until nothing new arrives.
      for (let i = 0; i < 5; i++) await runner.catchUp();
      return runner.db.prepare('SELECT seq, event_id, kind, source, fields FROM device_events ORDER BY seq').all();
    };
    try {
      const story = [...drive(0, [62, 60, 48, 36, 25, 22, 22]), alarm(8, 'event.sos'), later(6)];
      for (const e of story) await store.appendToStream(streams.telemetry(DEVICE), [{ ...e, id: crypto.randomUUID() }]);
      const first = new ProjectionRunner(store, openReadModelDb(join(dir, 'a.sqlite')), readModelProjections(), silentLogger);
      const before = await rows(first);
      expect(before.map((r) => (r as { kind: string }).kind)).toEqual(['event.sos', 'event.harsh_brake']);
      const logSize = (await store.readAll()).length;

      const rebuilt = new ProjectionRunner(store, openReadModelDb(join(dir, 'b.sqlite')), readModelProjections(), silentLogger);
      expect(await rows(rebuilt)).toEqual(before);
      expect((await store.readAll()).length).toBe(logSize);
      await first.stop();
      await rebuilt.stop();
      first.db.close();
      rebuilt.db.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
