/**
 * Every GT06 corpus frame against our framer and decoder. Facts come from the corpus (what
 * Traccar asserted, in Traccar's names and units), mapped onto ours through the tables
 * below. Frames with integrity issues are checked against our policy (README.md): the
 * known checksum-less variants are accepted, every other CRC mismatch is refused.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { crc16X25 } from '../../gateway/codec/crc.js';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { Decoded, DecodedRecord, SessionInfo } from '../../gateway/protocol.js';
import { decode } from '../../gateway/protocols/gt06/decode.js';
import { splitFrames } from '../../gateway/protocols/gt06/frame.js';
import { KNOTS_TO_KMH, loadFrames, type ConformanceFrame } from '../support/conformance.js';

const NOW = Date.UTC(2026, 6, 1, 12, 0, 0);
const frames = loadFrames('gt06');

function sessionFor(f: ConformanceFrame): SessionInfo {
  return { imei: null, model: f.context?.device_model ?? null, timezoneMinutes: null, frameIndex: 0, now: NOW };
}

const bytesOf = (f: ConformanceFrame): Buffer => Buffer.from(f.hex, 'hex');
const protoOf = (frame: Buffer): number => frame[frame[0] === 0x79 ? 4 : 3]!;
const crcMatches = (frame: Buffer): boolean =>
  frame.length >= 10 && frame.readUInt16BE(frame.length - 4) === crc16X25(frame, 2, frame.length - 4);

/** The frames our framer cuts from the wire bytes; a frame it cannot cut alone (#79, no 0d0a) goes to the decoder whole. */
function framesToDecode(wire: Buffer): Buffer[] {
  const split = splitFrames(wire);
  return split.frames.length > 0 ? split.frames : [wire];
}

function refusal(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DecodeError) return err;
    throw err;
  }
  throw new Error('expected a DecodeError');
}

// ---------------------------------------------------------------------------
// Policy for frames with integrity issues, derived from their bytes

/** Protocol numbers that carry a GPS block in the standard layout: such frames must yield a located record. */
const LOCATION_PROTOCOLS = new Set([0x10, 0x11, 0x12, 0x16, 0x22, 0x26, 0x27, 0xa0, 0xa4]);

type Outcome = { accepted: 'wifi' | 'short_login' | 'checksumless_gps' | 'crc_ok' } | { refused: DecodeError['code'] };

function expectedOutcome(frame: Buffer): Outcome {
  if (frame[frame.length - 2] !== 0x0d || frame[frame.length - 1] !== 0x0a) return { refused: 'malformed' };
  const proto = protoOf(frame);
  if (crcMatches(frame)) {
    // A location packet with no content at all (LEN 5) has nothing to decode.
    return frame.length === 10 && LOCATION_PROTOCOLS.has(proto) ? { refused: 'truncated' } : { accepted: 'crc_ok' };
  }
  if (frame[0] === 0x78 && (proto === 0x17 || proto === 0x69)) return { accepted: 'wifi' };
  if (frame[0] === 0x78 && proto === 0x01 && frame.length === 15) return { accepted: 'short_login' };
  if (frame[0] === 0x78 && proto === 0x10 && frame.length === 24) return { accepted: 'checksumless_gps' };
  return { refused: 'bad_checksum' };
}

// ---------------------------------------------------------------------------
// Traccar attribute -> ours

type Mapping =
  | { to: 'field'; name: keyof DecodedRecord }
  | { to: 'attribute'; name: string }
  /** A vendor layout we keep raw: `extra_hex` on the record, or the frame in `ignoredReason`. */
  | { to: 'raw' };

const RAW = { to: 'raw' } as const;

/** Keyed by Traccar name, or `name@0xPP` when the protocol number decides. */
const ATTRIBUTES: Record<string, Mapping> = {
  ignition: { to: 'field', name: 'ignition' },
  'ignition@0x12': RAW, // a vendor 0x12 layout carries it after the cell block
  batteryLevel: { to: 'attribute', name: 'battery_level' },
  'batteryLevel@0x13': RAW, // 0x13 with 21 content bytes: a vendor heartbeat
  'event@0x16': { to: 'attribute', name: 'alarm_code' },
  event: RAW,
  power: RAW,
  battery: RAW,
  temp1: RAW,
  tag1Temp: RAW,
  humidity: RAW,
  hours: RAW,
  steps: RAW,
  door: RAW,
  iccid: RAW,
  serial: RAW,
  result: RAW,
  driverUniqueId: RAW,
  networkTechnology: RAW,
  eventFiles: RAW,
  drivingTime: RAW,
  adc1: RAW,
};

/** Traccar alarm names onto our kinds; names without a kind must leave their code on the record. */
const ALARMS: Record<string, DeviceAlarmKind | null> = {
  sos: 'event.sos',
  overspeed: 'event.overspeed',
  hardBraking: 'event.harsh_brake',
  hardAcceleration: 'event.acceleration',
  hardCornering: 'event.curve',
  tampering: null,
  lowBattery: null,
  removing: null,
  general: null,
  accident: null,
};

function keptRaw(decoded: Decoded): boolean {
  return decoded.ignoredReason !== undefined || decoded.records.some((r) => typeof r.attributes.extra_hex === 'string');
}

function mappingFor(name: string, proto: number): Mapping {
  const mapping = ATTRIBUTES[`${name}@0x${proto.toString(16).padStart(2, '0')}`] ?? ATTRIBUTES[name];
  if (!mapping) throw new Error(`no mapping for Traccar attribute ${name}`);
  return mapping;
}

function checkAttribute(decoded: Decoded, proto: number, name: string, value: unknown): void {
  const record = decoded.records[0];
  if (name === 'alarm') {
    const kind = ALARMS[String(value)];
    if (kind === undefined) throw new Error(`no mapping for Traccar alarm ${String(value)}`);
    if (kind !== null) {
      expect(record?.alarms.map((a) => a.kind)).toContain(kind);
    } else if (record) {
      // No kind of ours: the device's code stays on the record.
      const codes = ['alarm_code', 'event_code', 'terminal_info'].filter((k) => record.attributes[k] !== undefined);
      expect(codes.length, `alarm ${String(value)} leaves its code`).toBeGreaterThan(0);
    } else {
      expect(keptRaw(decoded)).toBe(true);
    }
    return;
  }
  const mapping = mappingFor(name, proto);
  switch (mapping.to) {
    case 'field':
      expect(record, `${name}: a record`).toBeDefined();
      expect(record![mapping.name]).toEqual(value);
      return;
    case 'attribute':
      expect(record, `${name}: a record`).toBeDefined();
      if (value === null) expect(record!.attributes).not.toHaveProperty(mapping.name);
      else expect(record!.attributes[mapping.name]).toEqual(value);
      return;
    case 'raw':
      // Traccar asserts the attribute is absent: so is ours (we never name it).
      if (value === null) expect(record?.attributes ?? {}).not.toHaveProperty(name);
      else expect(keptRaw(decoded), `${name} kept raw`).toBe(true);
      return;
  }
}

function checkRecordsSane(records: DecodedRecord[]): void {
  expect(records.length).toBeLessThanOrEqual(1);
  for (const r of records) {
    expect(Number.isFinite(r.fixTime)).toBe(true);
    if (r.lat !== null) expect(Math.abs(r.lat)).toBeLessThanOrEqual(90);
    if (r.lng !== null) expect(Math.abs(r.lng)).toBeLessThanOrEqual(180);
    if (r.satellites !== null) expect(r.satellites).toBeLessThanOrEqual(15);
    if (r.headingDeg !== null) expect(r.headingDeg).toBeLessThan(1024);
  }
}


// ---------------------------------------------------------------------------

describe('GT06 corpus', () => {
  it('has the 190 frames this suite was written for', () => {
    expect(frames).toHaveLength(190);
  });

  for (const f of frames) {
    it(`#${f.index} ${f.note ?? ''}`, () => {
      const wire = bytesOf(f);
      const facts = f.expect ?? {};
      const session = sessionFor(f);

      if (facts.frame_decoder_output !== undefined) {
        const split = splitFrames(wire);
        expect(split.frames.map((x) => x.toString('hex'))).toEqual([facts.frame_decoder_output]);
        expect(split.consumed).toBe(wire.length);
      }

      const parts = framesToDecode(wire);
      const results = parts.map((frame) => {
        const outcome = expectedOutcome(frame);
        if ('refused' in outcome) {
          expect(refusal(() => decode(frame, session)).code).toBe(outcome.refused);
          return null;
        }
        const decoded = decode(frame, session);
        checkRecordsSane(decoded.records);
        checkAccepted(frame, outcome.accepted, decoded);
        return decoded;
      });
      const decoded = results[0];
      if (parts.length > 1 || decoded === null || decoded === undefined) {
        if (facts.null) for (const d of results) expect(d?.records ?? []).toHaveLength(0);
        return; // refused by policy: the corpus' facts are about bytes we do not accept
      }
      const proto = protoOf(parts[0]!);

      if (facts.null) expect(decoded.records).toHaveLength(0);
      const standardLocation = parts[0]![0] === 0x78 && LOCATION_PROTOCOLS.has(proto) && decoded.ignoredReason === undefined;
      if (standardLocation) expect(decoded.records).toHaveLength(1);
      if (decoded.records.length === 0 && !facts.null && decoded.identity === undefined) {
        // Traccar made something of it; we say why we did not.
        expect(decoded.ignoredReason).toBeDefined();
      }

      for (const [name, value] of Object.entries(facts.attributes ?? {})) checkAttribute(decoded, proto, name, value);

      if (facts.position) {
        const r = decoded.records[0]!;
        if (facts.position.time !== undefined) expect(r.fixTime).toBe(Date.parse(facts.position.time));
        if (facts.position.valid !== undefined) expect(r.valid).toBe(facts.position.valid);
        if (facts.position.lat !== undefined) expect(r.lat!).toBeCloseTo(facts.position.lat, 5);
        if (facts.position.lon !== undefined) expect(r.lng!).toBeCloseTo(facts.position.lon, 5);
      }
      if (facts.fields) {
        const r = decoded.records[0]!;
        if (facts.fields.speed !== undefined) expect(r.speedKmh!).toBeCloseTo(facts.fields.speed * KNOTS_TO_KMH, 0);
        if (facts.fields.course !== undefined) expect(r.headingDeg).toBe(facts.fields.course);
        // GT06 AZ735 packets carry altitude in a vendor block we keep as extra_hex.
        if (facts.fields.altitude !== undefined) expect(r.attributes.extra_hex).toEqual(expect.any(String));
      }

      const typical = f.derived?.typical_server_ack_hex;
      if (typeof typical === 'string' && crcMatches(parts[0]!) && decoded.reply !== null) {
        expect(decoded.reply.toString('hex')).toBe(typical);
      }
    });
  }
});

function checkAccepted(frame: Buffer, how: 'wifi' | 'short_login' | 'checksumless_gps' | 'crc_ok', decoded: Decoded): void {
  switch (how) {
    case 'wifi':
      // No fix to store; the unit gets its time-stamped reply: 78 78 00 proto · BCD time · 0d 0a.
      expect(decoded.records).toHaveLength(0);
      expect(decoded.reply?.toString('hex')).toBe(`787800${frame.subarray(3, 10).toString('hex')}0d0a`);
      return;
    case 'short_login':
      expect(decoded.identity?.imei).toBe(frame.subarray(4, 12).toString('hex').slice(1));
      return;
    case 'checksumless_gps':
      expect(decoded.records).toHaveLength(1);
      expect(decoded.records[0]!.lat).not.toBeNull();
      expect(decoded.reply).toBeNull(); // no serial to echo
      return;
    case 'crc_ok':
      return;
  }
}

describe('GT06 policy on the frames with integrity issues', () => {
  const flawed = frames.filter((f) => f.integrity_issues);

  it('covers the 31 flawed frames: 15 refused, 16 accepted as known variants', () => {
    expect(flawed).toHaveLength(31);
    const refused = flawed.filter((f) => 'refused' in expectedOutcome(framesToDecode(bytesOf(f))[0]!)).map((f) => f.index);
    // Stale CRCs on edited test frames (and #131, cut before its 0a); README.md lists each.
    expect(refused).toEqual([96, 97, 98, 99, 113, 131, 173, 202, 212, 217, 221, 222, 223, 224, 230]);
  });

  it('refuses a CRC mismatch without a reply, so the unit resends', () => {
    const f = frames.find((x) => x.index === 221)!; // 0x95 harsh braking, CRC edited
    const err = refusal(() => decode(bytesOf(f), sessionFor(f)));
    expect(err.code).toBe('bad_checksum');
    expect(err.reply).toBeNull();
  });

  it('#221 decodes as harsh braking once its CRC is repaired', () => {
    const frame = Buffer.from(bytesOf(frames.find((x) => x.index === 221)!));
    frame.writeUInt16BE(crc16X25(frame, 2, frame.length - 4), frame.length - 4);
    const decoded = decode(frame, sessionFor(frames[0]!));
    expect(decoded.records[0]!.alarms.map((a) => a.kind)).toEqual(['event.harsh_brake']);
    expect(decoded.records[0]!.fixTime).toBe(Date.UTC(2019, 9, 2, 9, 50, 28));
  });
});

describe('GT06 decoding details', () => {
  it('reads a login with the time zone it announces', () => {
    const f = frames.find((x) => x.hex.startsWith('78781101'))!;
    const decoded = decode(bytesOf(f), sessionFor(f));
    expect(decoded.identity?.imei).toMatch(/^\d{15}$/);
    const field = bytesOf(f).readUInt16BE(14);
    const minutes = Math.floor((field >> 4) / 100) * 60 + ((field >> 4) % 100);
    expect(decoded.announcedTimezoneMinutes).toBe(field & 0x08 ? -minutes : minutes);
  });

  it('applies the session zone to device times', () => {
    const f = frames.find((x) => x.index === 200)!;
    const utc = decode(bytesOf(f), sessionFor(f)).records[0]!.fixTime;
    const local = decode(bytesOf(f), { ...sessionFor(f), timezoneMinutes: 180 }).records[0]!.fixTime;
    expect(utc - local).toBe(3 * 3_600_000);
  });

  it('answers the time request with the server clock in UTC', () => {
    const f = frames.find((x) => x.hex.slice(6, 8) === '8a')!;
    const decoded = decode(bytesOf(f), sessionFor(f));
    const reply = decoded.reply!;
    expect(reply.subarray(0, 4).toString('hex')).toBe('78780b8a');
    expect([...reply.subarray(4, 10)]).toEqual([26, 7, 1, 12, 0, 0]);
    expect(reply.readUInt16BE(12)).toBe(crc16X25(reply, 2, 12));
    expect(decoded.records).toHaveLength(0);
  });

  it('keeps vendor bytes it does not interpret', () => {
    const f = frames.find((x) => x.index === 240)!; // VL103 0x16 with an RFID card after the status block
    const r = decode(bytesOf(f), sessionFor(f)).records[0]!;
    expect(r.attributes.extra_hex).toBe(f.expect!.attributes!.driverUniqueId);
  });
});
