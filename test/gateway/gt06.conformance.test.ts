/**
 * Every GT06 corpus frame against our framer and decoder. Facts come from the corpus (what
 * Traccar asserted, in Traccar's names and units), mapped onto ours through the tables
 * below. What becomes of each frame (records, identity, ignored with a reason, refused with
 * a code) is recorded in OUTCOMES, by hand from our policy (README.md): the known
 * checksum-less variants are accepted, every other CRC mismatch is refused. A decoder change
 * that moves a frame fails here and shows in the table's diff.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceAlarmKind } from '../../core/alarms.js';
import { crc16X25 } from '../../gateway/codec/crc.js';
import type { Decoded, DecodedRecord, SessionInfo } from '../../gateway/protocol.js';
import { decode } from '../../gateway/protocols/gt06/decode.js';
import { splitFrames } from '../../gateway/protocols/gt06/frame.js';
import { KNOTS_TO_KMH, loadFrames, type ConformanceFrame } from '../support/conformance.js';
import { checkOutcome, checkPosition, checkRecordsSane, observe, outcomesByFrame, refusal, type RecordedOutcome } from '../support/decoding.js';

const NOW = Date.UTC(2026, 6, 1, 12, 0, 0);
const frames = loadFrames('gt06');

function sessionFor(f: ConformanceFrame): SessionInfo {
  return { imei: null, model: f.context?.device_model ?? null, timezoneMinutes: null, frameIndex: 0, now: NOW };
}

const bytesOf = (f: ConformanceFrame): Buffer => Buffer.from(f.hex, 'hex');
const protoOf = (frame: Buffer): number => frame[frame[0] === 0x79 ? 4 : 3]!;

/** The frames our framer cuts from the wire bytes; a frame it cannot cut alone (#79, no 0d0a) goes to the decoder whole. */
function framesToDecode(wire: Buffer): Buffer[] {
  const split = splitFrames(wire);
  return split.frames.length > 0 ? split.frames : [wire];
}

// ---------------------------------------------------------------------------
// What becomes of each frame

/** Protocol numbers that carry a GPS block in the standard layout: such frames must yield a located record. */
const LOCATION_PROTOCOLS = new Set([0x10, 0x11, 0x12, 0x16, 0x22, 0x26, 0x27, 0xa0, 0xa4]);

/** A frame accepted although its CRC does not match: one of the variants real units send (README.md). */
type ChecksumlessVariant = 'wifi' | 'short_login' | 'checksumless_gps';

/**
 * Every GT06 corpus frame, by outcome: recorded by hand from README.md (its tables name the
 * frames), not computed by the decoder's rules. A frame of several packets (#208) has the
 * outcome for each of them.
 */
const OUTCOMES: Array<RecordedOutcome & { checksumless?: ChecksumlessVariant }> = [
  {
    outcome: 'records',
    why: 'a location, status or alarm packet with a matching CRC (#57: wrong LEN, but the CRC over its real bytes matches; #147: the GK310 heartbeat 0x23)',
    frames: [
      57, 58, 60, 64, 81, 82, 84, 85, 86, 87, 89, 90, 92, 93, 95, 100, 102, 104, 107, 110, 114, 115, 123, 125, 126, 128, 130,
      135, 136, 143, 146, 147, 148, 150, 151, 154, 169, 170, 171, 172, 174, 175, 180, 181, 192, 198, 199, 200, 201, 203, 204, 205,
      206, 207, 210, 214, 215, 220, 226, 233, 235, 236, 240, 241,
    ],
  },
  { outcome: 'records', checksumless: 'checksumless_gps', why: '24-byte GPS 0x10 without serial and CRC', frames: [55, 164] },
  { outcome: 'identity', why: 'a login with a matching CRC', frames: [59, 62, 176, 196, 197, 211] },
  { outcome: 'identity', checksumless: 'short_login', why: '15-byte login without serial and CRC', frames: [53, 216] },
  {
    outcome: 'ignored',
    checksumless: 'wifi',
    reason: /^WiFi\/LBS packet \(no GNSS fix\)/,
    why: 'WiFi/LBS 0x17/0x69 whose LEN is the access-point count, without CRC: no fix to store, answered with the time',
    frames: [52, 54, 56, 137, 138, 159, 160, 161, 162, 163, 165],
  },
  {
    outcome: 'ignored',
    reason: /^protocol 0x[0-9a-f]{2} not interpreted: [0-9a-f]+$/,
    why: 'a packet outside our model: cells or WiFi without a fix, vendor packets, answers to commands we never send (0x81)',
    frames: [
      65, 69, 70, 73, 74, 78, 79, 83, 105, 108, 109, 121, 141, 142, 149, 152, 153, 155, 156, 157, 166, 167, 168, 177, 178,
      179, 191, 209, 213, 218, 232, 238, 239,
    ],
  },
  {
    outcome: 'ignored',
    reason: /^long-form packet 0x[0-9a-f]{2} not interpreted: [0-9a-f]+$/,
    why: 'a long-form (79 79) packet outside our model: terminal info, modular TLV, pass-through, OBD text',
    frames: [
      63, 66, 67, 68, 71, 75, 76, 80, 91, 94, 103, 106, 111, 118, 119, 120, 122, 124, 127, 129, 132, 133, 134, 139, 140, 144,
      145, 183, 184, 186, 187, 188, 189, 190, 208, 237,
    ],
  },
  {
    outcome: 'ignored',
    reason: /^command reply: .+$/,
    why: 'a 0x15 / 0x21 answer to an online command: a CommandReply, no record (test/gateway/commands/gt06-commands.test.ts)',
    frames: [117, 158, 182, 185, 193, 194, 195],
  },
  {
    outcome: 'ignored',
    reason: /variant|layout of/,
    why: 'a vendor or model layout behind a standard protocol number (heartbeat variants, 0x95 video files, multi-cell 0x19, NT*/XT40 0x22, QH302R 0x12)',
    frames: [72, 77, 88, 101, 112, 116, 225, 227, 228, 229, 231, 234],
  },
  { outcome: 'ignored', reason: /^time request$/, why: 'a time request 0x8A: answered, nothing to store', frames: [219] },
  {
    outcome: 'refused:bad_checksum',
    why: 'a CRC mismatch on a frame that is no checksum-less variant: test frames edited with the CRC left stale, #217 a stub without one',
    frames: [96, 97, 98, 99, 113, 173, 202, 212, 217, 221, 222, 223, 224, 230],
  },
  { outcome: 'refused:malformed', why: 'cut before its 0a: the frame does not end with 0d0a', frames: [131] },
  { outcome: 'refused:truncated', why: 'a 0x12 location packet with serial and CRC but no content', frames: [61] },
];

const OUTCOME = outcomesByFrame(OUTCOMES, frames);
const recordedFor = (f: { index: number }) => OUTCOME.get(f.index)!;

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

/** GT06 records on top of the shared checks: one per packet at most, and field ranges the layout allows. */
function checkGt06Records(records: DecodedRecord[]): void {
  checkRecordsSane(records);
  expect(records.length).toBeLessThanOrEqual(1);
  for (const r of records) {
    if (r.satellites !== null) expect(r.satellites).toBeLessThanOrEqual(15);
    if (r.headingDeg !== null) expect(r.headingDeg).toBeLessThan(1024);
  }
}

/** What each checksum-less variant gets besides its outcome. */
function checkChecksumless(frame: Buffer, variant: ChecksumlessVariant, decoded: Decoded): void {
  switch (variant) {
    case 'wifi':
      // No fix to store; the unit gets its time-stamped reply: 78 78 00 proto · BCD time · 0d 0a.
      expect(decoded.reply?.toString('hex')).toBe(`787800${frame.subarray(3, 10).toString('hex')}0d0a`);
      return;
    case 'short_login':
      expect(decoded.identity?.imei).toBe(frame.subarray(4, 12).toString('hex').slice(1));
      return;
    case 'checksumless_gps':
      expect(decoded.records[0]!.lat).not.toBeNull();
      expect(decoded.reply).toBeNull(); // no serial to echo
      return;
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
      const recorded = recordedFor(f);

      if (facts.frame_decoder_output !== undefined) {
        const split = splitFrames(wire);
        expect(split.frames.map((x) => x.toString('hex'))).toEqual([facts.frame_decoder_output]);
        expect(split.consumed).toBe(wire.length);
      }

      const parts = framesToDecode(wire);
      const results = parts.map((frame) => {
        const seen = observe(() => decode(frame, session));
        checkOutcome(recorded, seen);
        if (seen.decoded) {
          checkGt06Records(seen.decoded.records);
          if (recorded.checksumless) checkChecksumless(frame, recorded.checksumless, seen.decoded);
        }
        return seen.decoded;
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

      for (const [name, value] of Object.entries(facts.attributes ?? {})) checkAttribute(decoded, proto, name, value);

      checkPosition(decoded.records[0], facts.position);
      if (facts.fields) {
        const r = decoded.records[0]!;
        if (facts.fields.speed !== undefined) expect(r.speedKmh!).toBeCloseTo(facts.fields.speed * KNOTS_TO_KMH, 0);
        if (facts.fields.course !== undefined) expect(r.headingDeg).toBe(facts.fields.course);
        // GT06 AZ735 packets carry altitude in a vendor block we keep as extra_hex.
        if (facts.fields.altitude !== undefined) expect(r.attributes.extra_hex).toEqual(expect.any(String));
      }

      // The corpus' typical ack is the echo with the frame's serial: not for the checksum-less variants.
      const typical = f.derived?.typical_server_ack_hex;
      if (typeof typical === 'string' && !recorded.checksumless && decoded.reply !== null) {
        expect(decoded.reply.toString('hex')).toBe(typical);
      }
    });
  }
});

describe('GT06 policy on the frames with integrity issues', () => {
  const flawed = frames.filter((f) => f.integrity_issues);

  it('covers the 31 flawed frames: 15 refused, 16 accepted as known variants', () => {
    expect(flawed).toHaveLength(31);
    const refused = flawed.filter((f) => recordedFor(f).outcome.startsWith('refused:')).map((f) => f.index);
    expect(refused).toEqual([96, 97, 98, 99, 113, 131, 173, 202, 212, 217, 221, 222, 223, 224, 230]);
    // The accepted ones are the checksum-less variants, and #57 (wrong LEN, matching CRC).
    const accepted = flawed.filter((f) => !refused.includes(f.index));
    expect(accepted.filter((f) => !recordedFor(f).checksumless).map((f) => f.index)).toEqual([57]);
  });

  it('records as checksum-less exactly the frames whose CRC field does not match their bytes', () => {
    const crcMatches = (frame: Buffer) => frame.length >= 10 && frame.readUInt16BE(frame.length - 4) === crc16X25(frame, 2, frame.length - 4);
    const checksumless = frames.filter((f) => recordedFor(f).checksumless).map((f) => f.index);
    const accepted = frames.filter((f) => !recordedFor(f).outcome.startsWith('refused:'));
    expect(accepted.filter((f) => !framesToDecode(bytesOf(f)).every(crcMatches)).map((f) => f.index)).toEqual(checksumless);
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
    // Zone field after the type id: bits 15-4 the zone x 100, bit 3 set for west of UTC.
    const announced = (index: number) => {
      const f = frames.find((x) => x.index === index)!;
      const decoded = decode(bytesOf(f), sessionFor(f));
      expect(decoded.identity?.imei).toBe(f.derived?.imei);
      return decoded.announcedTimezoneMinutes;
    };
    expect(announced(176)).toBe(0); // 0000: UTC
    expect(announced(211)).toBe(-240); // 190a: 400 (4:00), west
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
