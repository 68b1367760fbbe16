/**
 * Every Teltonika frame of the conformance corpus: either the records it must yield (the
 * facts Traccar asserted, mapped onto our names and units) or the refusal the corpus
 * integrity notes call for. Expected values come from the corpus, never from our decoder.
 */
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../gateway/codec/reader.js';
import type { Decoded, DecodedRecord, SessionInfo } from '../../gateway/protocol.js';
import { teltonika } from '../../gateway/protocols/teltonika/index.js';
import { decodeUdp } from '../../gateway/protocols/teltonika/udp.js';
import { KNOTS_TO_KMH, loadFrames, type ConformanceFrame } from '../support/conformance.js';

type Frame = ConformanceFrame & { index: number };

const frames = loadFrames('teltonika');

/** Traccar attribute names the corpus asserts -> our attribute names (units in the suffix). */
const ATTRIBUTE_NAMES: Record<string, string> = {
  tag1Voltage: 'tag1_voltage_mv',
  tag1Battery: 'tag1_battery_mv',
  eyeTemp1: 'eye_temp1_c',
  driverUniqueId: 'driver_unique_id',
};

/** A fixed clock: codec 12 messages carry no time of their own. */
const NOW = Date.UTC(2026, 0, 1);

function sessionFor(f: Frame): SessionInfo {
  return { imei: null, model: f.context?.device_model ?? null, timezoneMinutes: null, frameIndex: 0, now: NOW };
}

function issuesOf(f: Frame): string[] {
  return Array.isArray(f.integrity_issues) ? (f.integrity_issues as string[]) : [];
}

/** Our policy applied to the corpus integrity notes: a wrong length or CRC refuses the frame. */
function expectedRefusal(f: Frame): 'bad_length' | 'bad_checksum' | null {
  const issues = issuesOf(f);
  if (issues.some((i) => i.startsWith('data length field'))) return 'bad_length';
  if (issues.some((i) => i.startsWith('crc16 mismatch'))) return 'bad_checksum';
  return null;
}

/** "data length field 167 but frame carries 165 data bytes" -> [167, 165]. */
function declaredAndCarried(f: Frame): [number, number] | null {
  for (const issue of issuesOf(f)) {
    const m = /^data length field (\d+) but frame carries (\d+) data bytes/.exec(issue);
    if (m) return [Number(m[1]), Number(m[2])];
  }
  return null;
}

function decodeError(run: () => unknown): DecodeError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(DecodeError);
    return err as DecodeError;
  }
  throw new Error('expected a DecodeError');
}

function isLocationChecked(f: Frame): boolean {
  return (f.sources ?? []).some((s) => s.helper === 'verifyPositions' && s.location_not_checked !== true);
}

/** The record Traccar's verifyAttribute/verifyPosition looks at: the first decoded position. */
function assertedRecord(records: DecodedRecord[]): DecodedRecord {
  expect(records.length).toBeGreaterThan(0);
  return records[0]!;
}

function checkAttributes(f: Frame, record: DecodedRecord): void {
  for (const [traccarName, value] of Object.entries(f.expect?.attributes ?? {})) {
    const ours = ATTRIBUTE_NAMES[traccarName];
    if (ours === undefined) throw new Error(`no mapping for Traccar attribute ${traccarName}`);
    if (value === null) expect(record.attributes).not.toHaveProperty(ours);
    else if (typeof value === 'number') expect(record.attributes[ours]).toBeCloseTo(value, 5);
    else expect(record.attributes[ours]).toEqual(value);
  }
}

function checkPositionFacts(f: Frame, record: DecodedRecord): void {
  const position = f.expect?.position;
  if (position?.time !== undefined) expect(record.fixTime).toBe(Date.parse(position.time));
  if (position?.valid !== undefined) expect(record.valid).toBe(position.valid);
  if (position?.lat !== undefined) expect(record.lat).toBeCloseTo(position.lat, 5);
  if (position?.lon !== undefined) expect(record.lng).toBeCloseTo(position.lon, 5);
  const fields = f.expect?.fields ?? {};
  if (fields.speed !== undefined) expect(record.speedKmh).toBeCloseTo(fields.speed * KNOTS_TO_KMH, 1);
  if (fields.course !== undefined) expect(record.headingDeg).toBeCloseTo(fields.course, 5);
  if (fields.altitude !== undefined) expect(record.altitudeM).toBeCloseTo(fields.altitude, 5);
}

/** What verifyPositions checks: every record has a sane time and location. */
function checkSanePositions(records: DecodedRecord[]): void {
  for (const r of records) {
    expect(r.fixTime).toBeGreaterThan(Date.UTC(2000, 0, 1));
    expect(r.fixTime).toBeLessThan(NOW);
    expect(r.lat).not.toBeNull();
    expect(r.lng).not.toBeNull();
    expect(Math.abs(r.lat!)).toBeLessThanOrEqual(90);
    expect(Math.abs(r.lng!)).toBeLessThanOrEqual(180);
  }
}

/** Codec 12 type 0x06: a reply to a command, decoded as a CommandReply (test/gateway/commands/teltonika-commands.test.ts). */
function isCommandReply(f: Frame): boolean {
  return f.derived?.codec === '0x0c' && f.derived?.codec12_type === '0x06';
}

function checkRecords(f: Frame, decoded: Decoded): void {
  if (isCommandReply(f)) {
    expect(decoded.records).toHaveLength(0);
    expect(decoded.replies).toHaveLength(f.derived?.records_header as number);
    return;
  }
  if (f.expect?.null) {
    expect(decoded.records).toHaveLength(0);
    return;
  }
  expect(decoded.records).toHaveLength(f.derived?.records_header as number);
  if (isLocationChecked(f)) checkSanePositions(decoded.records);
  const record = assertedRecord(decoded.records);
  checkAttributes(f, record);
  checkPositionFacts(f, record);
}

function checkReply(f: Frame, decoded: Decoded): void {
  const ack = f.derived?.server_ack_hex as string | undefined;
  // No typical ack in the corpus: codec 12/13 messages are one-way.
  expect(decoded.reply?.toString('hex') ?? null).toBe(ack ?? null);
}

/** The frame decoder expectation; a keep-alive is cut off and consumed rather than emitted. */
function checkFramer(f: Frame, buf: Buffer): void {
  const output = f.expect?.frame_decoder_output;
  if (output === undefined) return;
  const split = teltonika.splitFrames(buf);
  expect(split.fatal).toBeUndefined();
  expect(split.consumed).toBe(buf.length);
  if (/^(ff)+$/.test(output)) {
    const rest = buf.subarray(output.length / 2);
    expect(split.frames.map((x) => x.toString('hex'))).toEqual([rest.toString('hex')]);
  } else {
    expect(split.frames[0]?.toString('hex')).toBe(output);
  }
}

/** How the framer must treat a frame whose length field disagrees with its bytes. */
function checkFramerOnBadLength(f: Frame, buf: Buffer): void {
  const lengths = declaredAndCarried(f);
  if (!lengths) return;
  const [declared, carried] = lengths;
  const split = teltonika.splitFrames(buf);
  expect(split.frames).toHaveLength(0);
  if (declared < 3) {
    expect(split.fatal).toMatch(/too small/); // no data field is that short: unframeable
  } else if (declared > carried) {
    expect(split.fatal).toBeUndefined(); // waits for bytes that never come; the idle timeout ends it
    expect(split.consumed).toBe(0);
  }
}

function checkUdp(f: Frame, buf: Buffer): void {
  const d = f.derived ?? {};
  const decoded = decodeUdp(buf, sessionFor(f));
  expect(decoded.imei).toBe(d.imei);
  expect(decoded.records).toHaveLength(d.records_header as number);
  const count = (d.records_header as number).toString(16).padStart(2, '0');
  const avlPacketId = (d.avl_packet_id as number).toString(16).padStart(2, '0');
  expect(decoded.reply?.toString('hex')).toBe(`0005${d.udp_packet_id as string}01${avlPacketId}${count}`);
}

function checkFrame(f: Frame): void {
  const buf = Buffer.from(f.hex, 'hex');
  if (f.transport === 'udp') return checkUdp(f, buf);
  checkFramer(f, buf);
  const kind = f.derived?.kind;
  if (kind === 'ping_0xff_then_more') {
    // Framer-only sample; what follows the keep-alive is an ordinary IMEI packet.
    const [imeiPacket] = teltonika.splitFrames(buf).frames;
    expect(teltonika.decode(imeiPacket!, sessionFor(f)).identity?.imei).toMatch(/^\d{15}$/);
    return;
  }
  if (kind === 'ping_0xff') {
    const decoded = teltonika.decode(buf, sessionFor(f));
    expect(decoded.records).toHaveLength(0);
    expect(decoded.reply).toBeNull();
    expect(teltonika.splitFrames(buf)).toEqual({ frames: [], consumed: 1, skipped: 0 });
    return;
  }
  if (kind === 'imei_login') {
    const decoded = teltonika.decode(buf, sessionFor(f));
    expect(decoded.identity?.imei).toBe(f.derived?.imei);
    expect(decoded.reply?.toString('hex')).toBe(f.derived?.server_ack_hex);
    expect(decoded.refuse?.toString('hex')).toBe('00');
    checkRecords(f, decoded);
    return;
  }
  expect(kind).toBe('avl_data');
  const refusal = expectedRefusal(f);
  if (refusal) {
    const err = decodeError(() => teltonika.decode(buf, sessionFor(f)));
    expect(err.code).toBe(refusal);
    expect(err.reply).toBeNull(); // no ack: the device keeps the records and resends
    checkFramerOnBadLength(f, buf);
    return;
  }
  expect(teltonika.splitFrames(buf).frames.map((x) => x.toString('hex'))).toEqual([f.hex]);
  const decoded = teltonika.decode(buf, sessionFor(f));
  checkRecords(f, decoded);
  checkReply(f, decoded);
}

function label(f: Frame): string {
  return `#${f.index} ${f.note ?? ''}`.trim();
}

describe('Teltonika conformance corpus', () => {
  it('holds the Teltonika frames the brief describes', () => {
    expect(frames.length).toBeGreaterThanOrEqual(50);
    // gateway/protocols/teltonika/README.md: 9 Teltonika frames fail the CRC or length check.
    expect(frames.filter((f) => expectedRefusal(f) !== null)).toHaveLength(9);
  });

  it.each(frames.map((f) => [label(f), f] as const))('%s', (_name, f) => {
    checkFrame(f);
  });
});

/**
 * The alarm rule of README.md, restated independently of the decoder and checked on every
 * record the corpus yields: alarms follow the record's event IO (and panic priority).
 */
describe('Teltonika alarms on corpus records', () => {
  function expectedKinds(r: DecodedRecord): string[] {
    const a = r.attributes;
    if (a.event_io === undefined) return a.io222 === 1 ? ['event.sos'] : []; // codec 7
    const event = a.generation_type === 7 ? 0 : (a.event_io as number);
    const kinds: string[] = [];
    if (a.priority === 2 || (event === 236 && a.io236 === 1)) kinds.push('event.sos');
    if (event === 253) kinds.push(...({ 1: ['event.acceleration'], 2: ['event.harsh_brake'], 3: ['event.curve'] }[a.io253 as number] ?? []));
    if (event === 255 && a.io255 !== undefined) kinds.push('event.overspeed');
    if (event === 239 && a.io239 !== undefined) kinds.push(a.io239 ? 'event.ignition_on' : 'event.ignition_off');
    if (event === 247 && (a.io247 === 1 || a.io247 === 6)) kinds.push('alarm.adas.collision');
    return kinds;
  }

  const decodable = frames.filter((f) => f.transport === 'tcp' && f.derived?.kind === 'avl_data' && expectedRefusal(f) === null);
  it.each(decodable.map((f) => [label(f), f] as const))('%s', (_name, f) => {
    for (const r of teltonika.decode(Buffer.from(f.hex, 'hex'), sessionFor(f)).records) {
      expect(r.alarms.map((x) => x.kind)).toEqual(expectedKinds(r));
    }
  });

  it('sees at least one of each rule in the corpus (SOS, ignition, crash) and skips crash-trace and periodic records', () => {
    const all = decodable.flatMap((f) => teltonika.decode(Buffer.from(f.hex, 'hex'), sessionFor(f)).records);
    const kinds = new Set(all.flatMap((r) => r.alarms.map((a) => a.kind)));
    expect(kinds).toEqual(new Set(['event.sos', 'event.ignition_off', 'alarm.adas.collision']));
    // Crash-trace records (IO 247 = 2..5) and codec 16 periodic records with event IO 253 raise nothing.
    expect(all.some((r) => r.attributes.event_io === 247 && r.attributes.io247 === 5 && r.alarms.length === 0)).toBe(true);
    expect(all.some((r) => r.attributes.event_io === 253 && r.attributes.generation_type === 7 && r.alarms.length === 0)).toBe(true);
  });
});
