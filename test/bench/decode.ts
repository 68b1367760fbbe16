/**
 * Decoder throughput: records/s per protocol on frames the simulator's
 * encoders generate (real wire bytes with valid checksums).
 */
import type { ProtocolName, SessionInfo } from '../../gateway/protocol.js';
import { protocols } from '../../gateway/protocols/index.js';
import { encoders } from '../simulator/run.js';
import { Route } from '../simulator/route.js';

export interface DecodeFigure {
  protocol: ProtocolName;
  pointsPerFrame: number;
  recordsPerSecond: number;
  framesPerSecond: number;
}

export function benchDecode(protocol: ProtocolName, pointsPerFrame: number, seconds = 2): DecodeFigure {
  const encoder = encoders[protocol];
  const module = protocols[protocol];
  const route = new Route({ seed: 1, startLat: 56.95, startLng: 24.1, startTime: Date.UTC(2026, 0, 1) });
  const ctx = { imei: '352098071234566', terminalId: '098071234566' };
  const frames = Array.from({ length: 1000 }, (_, i) =>
    encoder.encode(Array.from({ length: pointsPerFrame }, () => route.next()), { ...ctx, serial: i + 1 }),
  );
  const session: SessionInfo = { imei: ctx.imei, model: null, timezoneMinutes: null, frameIndex: 0, now: Date.now() };
  let records = 0;
  let framesDone = 0;
  // Warm up the JIT before measuring.
  for (let i = 0; i < 20_000; i++) module.decode(frames[i % frames.length]!, session);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  while (performance.now() < deadline) {
    for (let i = 0; i < frames.length; i++) records += module.decode(frames[i]!, session).records.length;
    framesDone += frames.length;
  }
  const elapsed = (performance.now() - started) / 1000;
  return { protocol, pointsPerFrame, recordsPerSecond: records / elapsed, framesPerSecond: framesDone / elapsed };
}

export function runDecodeBench(): DecodeFigure[] {
  const figures = [
    benchDecode('teltonika', 1),
    benchDecode('teltonika', 10),
    benchDecode('gt06', 1),
    benchDecode('jt808', 1),
  ];
  const targets: Record<ProtocolName, number> = { teltonika: 600_000, gt06: 1_000_000, jt808: 1_000_000 };
  process.stdout.write('decode (records/s per protocol decoder, one core)\n');
  for (const f of figures) {
    const target = targets[f.protocol];
    process.stdout.write(
      `  ${f.protocol.padEnd(10)} ${String(f.pointsPerFrame).padStart(2)} rec/frame  ${Math.round(f.recordsPerSecond).toLocaleString('en-US').padStart(11)} records/s  ` +
        `${Math.round(f.framesPerSecond).toLocaleString('en-US').padStart(11)} frames/s  target ${target.toLocaleString('en-US')}: ${f.recordsPerSecond >= target ? 'met' : 'MISSED'}\n`,
    );
  }
  return figures;
}
