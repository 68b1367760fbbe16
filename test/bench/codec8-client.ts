/**
 * The ingest benchmark's load client, run in its own process so it never shares an event
 * loop with the server it measures. Teltonika devices over real sockets, sending Codec 8
 * frames as FMB units do: 1 to 10 records per frame, 10 IO elements per record. Each
 * device's frames are encoded once; a send only patches the record count, timestamps,
 * coordinates and odometer, and the CRC, so every record is unique and the client costs
 * far less per record than the server.
 *
 *   closed  each device sends its next frame as soon as the previous one is acked
 *   open    each device sends one frame every `intervalMs`, ack or not (a real fleet's
 *           pace), first sends spread over the interval
 *
 * Input: one JSON argument (ClientConfig). Output: one JSON line (ClientReport) on stdout.
 */
import { connect, type Socket } from 'node:net';
import { crc16Arc } from '../../gateway/codec/crc.js';

export interface ClientConfig {
  host: string;
  port: number;
  imeis: string[];
  mode: 'closed' | 'open';
  intervalMs: number;
  durationS: number;
  /** Connections opened at once while logging in (a fleet does not reconnect all in the same millisecond). */
  connectConcurrency: number;
}

export interface ClientReport {
  devices: number;
  loggedIn: number;
  /** Seconds from the first connect until every device had its login answered (a fleet reconnecting at once). */
  loginSeconds: number;
  frames: number;
  records: number;
  /** Records acked before the deadline, per second of the run: the throughput. */
  recordsPerSecond: number;
  seconds: number;
  /** Ack latencies in ms. */
  p50: number;
  p99: number;
  max: number;
  /** Ack latencies per second of the load (by when the ack came): where in the run the tail is. */
  perSecond: Array<{ acks: number; p50: number; p99: number; max: number }>;
  /** CPU the client itself used (user + system), seconds: it must stay well below the server's. */
  cpuSeconds: number;
  errors: number;
  unacked: number;
}

const RECORD_BYTES = 60;
const MAX_RECORDS = 10;
/** Preamble (4) + data length (4) + codec id (1) + count (1) + records + count (1) + CRC (4). */
const FRAME_BYTES = 8 + 1 + 1 + RECORD_BYTES * MAX_RECORDS + 1 + 4;

/** One AVL record with ten IO elements (ignition, movement, GSM signal, GNSS status; voltages, speed, PDOP; odometers). */
function writeRecordTemplate(buf: Buffer, at: number): void {
  let o = at;
  o = buf.writeBigUInt64BE(0n, o); // timestamp, patched per send
  o = buf.writeUInt8(0, o); // priority
  o = buf.writeInt32BE(0, o); // longitude, patched
  o = buf.writeInt32BE(0, o); // latitude, patched
  o = buf.writeInt16BE(21, o); // altitude
  o = buf.writeUInt16BE(90, o); // angle
  o = buf.writeUInt8(11, o); // satellites
  o = buf.writeUInt16BE(52, o); // speed km/h
  o = buf.writeUInt8(0, o); // event IO id
  o = buf.writeUInt8(10, o); // IO elements in all
  o = buf.writeUInt8(4, o);
  for (const [id, v] of [[239, 1], [240, 1], [21, 4], [69, 1]] as const) o = buf.writeUInt8(v, buf.writeUInt8(id, o));
  o = buf.writeUInt8(4, o);
  for (const [id, v] of [[66, 13_800], [67, 4_100], [24, 52], [181, 9]] as const) o = buf.writeUInt16BE(v, buf.writeUInt8(id, o));
  o = buf.writeUInt8(2, o);
  for (const id of [16, 199]) o = buf.writeUInt32BE(0, buf.writeUInt8(id, o)); // odometers, patched
  o = buf.writeUInt8(0, o); // no 8-byte elements
  if (o - at !== RECORD_BYTES) throw new Error(`record template is ${o - at} bytes`);
}

class Device {
  readonly frame = Buffer.alloc(FRAME_BYTES);
  private lastTime = 0;
  private odometer = 0;
  private seq = 0;
  private lat: number;
  private lng: number;
  /** Send times of frames not acked yet, oldest first, with their record counts. */
  readonly inFlight: Array<{ sentAt: number; records: number }> = [];
  socket: Socket | null = null;
  pendingAck = Buffer.alloc(0);

  constructor(readonly index: number, readonly imei: string) {
    for (let r = 0; r < MAX_RECORDS; r++) writeRecordTemplate(this.frame, 10 + r * RECORD_BYTES);
    this.frame.writeUInt8(0x08, 8);
    this.lat = 54 + (index % 100) * 0.05;
    this.lng = 10 + Math.floor(index / 100) * 0.05;
  }

  /** The next frame, patched in place: returns the bytes to send and its record count. */
  next(now: number): { bytes: Buffer; records: number } {
    const records = 1 + ((this.seq++ * 7 + this.index) % MAX_RECORDS);
    const f = this.frame;
    f.writeUInt8(records, 9);
    const first = Math.max(this.lastTime + 1, now - records + 1);
    for (let r = 0; r < records; r++) {
      const at = 10 + r * RECORD_BYTES;
      // The whole timestamp: a shorter frame before this one wrote its count and CRC over this slot's first bytes.
      f.writeUInt16BE(0, at);
      f.writeUIntBE(first + r, at + 2, 6);
      this.lat += 0.00002;
      this.lng += 0.00003;
      f.writeInt32BE(Math.round(this.lng * 1e7), at + 9);
      f.writeInt32BE(Math.round(this.lat * 1e7), at + 13);
      this.odometer += 7;
      f.writeUInt32BE(this.odometer, at + 50);
      f.writeUInt32BE(this.odometer, at + 55);
    }
    this.lastTime = first + records - 1;
    const end = 10 + records * RECORD_BYTES;
    f.writeUInt8(records, end);
    const crc = crc16Arc(f, 8, end + 1);
    f.writeUInt32BE(crc, end + 1);
    f.writeUInt32BE(end + 1 - 8, 4);
    // A copy: the template is patched again before the socket may have flushed this one.
    return { bytes: Buffer.from(f.subarray(0, end + 5)), records };
  }
}

function login(device: Device, config: ClientConfig): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: config.host, port: config.port, noDelay: true });
    const done = (ok: boolean) => {
      socket.removeAllListeners('data');
      resolve(ok);
    };
    socket.once('connect', () => {
      const imei = Buffer.from(device.imei, 'ascii');
      const hello = Buffer.alloc(2 + imei.length);
      hello.writeUInt16BE(imei.length, 0);
      imei.copy(hello, 2);
      socket.write(hello);
    });
    socket.once('data', (d: Buffer) => done(d[0] === 0x01));
    socket.on('error', () => done(false));
    device.socket = socket;
  });
}

/** Median, 99th percentile and maximum of latencies in ms (zeros for none). */
function summarise(latencies: readonly number[]): { acks: number; p50: number; p99: number; max: number } {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
  return { acks: sorted.length, p50: at(50), p99: at(99), max: sorted.length ? sorted[sorted.length - 1]! : 0 };
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const config = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ClientConfig;
  const devices = config.imeis.map((imei, i) => new Device(i, imei));
  let loggedIn = 0;
  const loginStarted = performance.now();
  for (let i = 0; i < devices.length; i += config.connectConcurrency) {
    const outcomes = await Promise.all(devices.slice(i, i + config.connectConcurrency).map((d) => login(d, config)));
    loggedIn += outcomes.filter(Boolean).length;
  }
  const loginSeconds = (performance.now() - loginStarted) / 1000;
  /** Ack latencies in ms, by the second of the load the ack came in (a second without acks has none). */
  const latenciesBySecond: number[][] = [];
  let frames = 0;
  let records = 0;
  let recordsInWindow = 0;
  let errors = 0;
  let stopping = false;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + config.durationS * 1000;

  const send = (d: Device) => {
    if (stopping || !d.socket || d.socket.destroyed) return;
    const now = performance.now();
    const { bytes, records: n } = d.next(Date.now());
    d.inFlight.push({ sentAt: now, records: n });
    d.socket.write(bytes);
  };

  for (const d of devices) {
    const socket = d.socket;
    if (!socket) continue;
    socket.on('error', () => errors++);
    socket.on('data', (chunk: Buffer) => {
      // Acks are 4 bytes each (the record count); several may arrive together.
      const buf = d.pendingAck.length > 0 ? Buffer.concat([d.pendingAck, chunk]) : chunk;
      let o = 0;
      const now = performance.now();
      for (; o + 4 <= buf.length; o += 4) {
        const sent = d.inFlight.shift();
        if (!sent) continue;
        frames++;
        records += sent.records;
        if (now <= deadline) recordsInWindow += sent.records;
        (latenciesBySecond[Math.floor((now - started) / 1000)] ??= []).push(now - sent.sentAt);
        if (config.mode === 'closed' && now < deadline) send(d);
      }
      d.pendingAck = o < buf.length ? Buffer.from(buf.subarray(o)) : Buffer.alloc(0);
    });
  }

  const timers: NodeJS.Timeout[] = [];
  if (config.mode === 'closed') for (const d of devices) send(d);
  else {
    devices.forEach((d, i) => {
      const offset = (i / devices.length) * config.intervalMs;
      timers.push(
        setTimeout(() => {
          send(d);
          timers.push(setInterval(() => send(d), config.intervalMs));
        }, offset),
      );
    });
  }
  await new Promise((r) => setTimeout(r, config.durationS * 1000));
  stopping = true;
  for (const t of timers) clearTimeout(t);
  // Frames sent before the deadline may still be acked: give them a moment, then count what stayed unacked.
  const grace = performance.now() + 10_000;
  while (devices.some((d) => d.inFlight.length > 0) && performance.now() < grace) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const perSecond = Array.from(latenciesBySecond, (second) => second ?? []);
  const overall = summarise(perSecond.flat());
  const report: ClientReport = {
    devices: devices.length,
    loggedIn,
    loginSeconds,
    frames,
    records,
    recordsPerSecond: recordsInWindow / config.durationS,
    seconds,
    p50: overall.p50,
    p99: overall.p99,
    max: overall.max,
    perSecond: perSecond.map(summarise),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    errors,
    unacked: devices.reduce((n, d) => n + d.inFlight.length, 0),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
  for (const d of devices) d.socket?.destroy();
  process.exit(0);
}

void main();
