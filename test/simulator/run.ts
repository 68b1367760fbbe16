/**
 * Runs a fleet of simulated devices against a gateway: optional registration
 * through the REST API, a progress callback, and a summary of what was acked.
 */
import { imeiFrom } from '../../core/imei.js';
import type { ProtocolName } from '../../gateway/protocol.js';
import { SimulatedDevice } from './device.js';
import { gt06Encoder } from './encoders/gt06.js';
import { jt808Encoder } from './encoders/jt808.js';
import { teltonikaEncoder } from './encoders/teltonika.js';
import type { ProtocolEncoder, SimPoint } from './encoders/types.js';
import { Route } from './route.js';

export const encoders: Record<ProtocolName, ProtocolEncoder> = {
  teltonika: teltonikaEncoder,
  gt06: gt06Encoder,
  jt808: jt808Encoder,
};

export interface SimulationOptions {
  protocol: ProtocolName;
  host: string;
  port: number;
  devices: number;
  /** Pause between frames of one device; 0 sends the next frame as soon as the ack arrives. */
  intervalMs: number;
  /** Stop after this long; or after `framesPerDevice` frames, whichever first. */
  durationS?: number;
  framesPerDevice?: number;
  pointsPerFrame?: number;
  /** Distinguishes fleets so several runs do not share IMEIs. */
  seed?: number;
  /** Fix time of every device's first point; by default a fixed day per seed, so tests and benches repeat exactly. */
  startTime?: number;
  ackTimeoutMs?: number;
  /** Registers each device through the REST API first. */
  api?: { url: string; apiKey: string };
  onProgress?(p: SimulationProgress): void;
  /** Called with every acked point. */
  onAck?(device: SimulatedDeviceInfo, points: SimPoint[], latencyMs: number): void;
  signal?: AbortSignal;
}

export interface SimulatedDeviceInfo {
  index: number;
  imei: string;
  terminalId: string;
  deviceId: string | null;
}

export interface SimulationProgress {
  elapsedS: number;
  ackedFrames: number;
  ackedPoints: number;
  reconnects: number;
  refused: number;
}

export interface SimulationSummary extends SimulationProgress {
  devices: SimulatedDeviceInfo[];
  pointsPerSecond: number;
  ackLatencyMs: { p50: number; p99: number; max: number };
}

/**
 * A start time for a fleet that should look live: each point is one simulated
 * second, so a fleet sending faster than one point a second runs ahead of the
 * clock. It starts that far in the past, and its last fixes land at about
 * `now`, never in the future (where the platform would not believe them).
 */
export function liveStartTime(now: number, o: { intervalMs: number; pointsPerFrame: number; durationS: number }): number {
  const simulatedPerReal = o.intervalMs > 0 ? (1000 * o.pointsPerFrame) / o.intervalMs : Infinity;
  const aheadS = simulatedPerReal <= 1 ? 0 : Number.isFinite(simulatedPerReal) ? o.durationS * (simulatedPerReal - 1) : 86_400;
  return Math.floor(now / 1000) * 1000 - Math.ceil(aheadS) * 1000;
}

/** Default fleets differ per protocol, so simulators of the three protocols run side by side never share an IMEI. */
export const DEFAULT_SEEDS: Record<ProtocolName, number> = { teltonika: 1, gt06: 2, jt808: 3 };

/** IMEI and JT/T 808 terminal number of simulated device `index` in fleet `seed`. */
export function simulatedIdentity(seed: number, index: number): { imei: string; terminalId: string } {
  const body = `35${String(seed % 1000).padStart(3, '0')}${String(index).padStart(9, '0')}`;
  const imei = imeiFrom(body);
  return { imei, terminalId: imei.slice(3) };
}

export async function registerDevices(
  api: { url: string; apiKey: string },
  protocol: ProtocolName,
  devices: SimulatedDeviceInfo[],
): Promise<void> {
  for (const d of devices) {
    const res = await fetch(`${api.url}/v1/devices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        imei: d.imei,
        model: `sim-${protocol}`,
        name: `Sim ${protocol} ${d.index}`,
        ...(protocol === 'jt808' ? { terminal_id: d.terminalId } : {}),
      }),
    });
    if (res.status === 201) d.deviceId = ((await res.json()) as { id: string }).id;
    else if (res.status !== 409) throw new Error(`registering ${d.imei} failed: ${res.status} ${await res.text()}`);
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runSimulation(o: SimulationOptions): Promise<SimulationSummary> {
  const seed = o.seed ?? DEFAULT_SEEDS[o.protocol];
  const encoder = encoders[o.protocol];
  const pointsPerFrame = Math.min(o.pointsPerFrame ?? 1, encoder.maxPointsPerFrame);
  const infos: SimulatedDeviceInfo[] = Array.from({ length: o.devices }, (_, index) => ({
    index,
    ...simulatedIdentity(seed, index),
    deviceId: null,
  }));
  if (o.api) await registerDevices(o.api, o.protocol, infos);

  const progress: SimulationProgress = { elapsedS: 0, ackedFrames: 0, ackedPoints: 0, reconnects: 0, refused: 0 };
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = o.durationS !== undefined ? started + o.durationS * 1000 : Infinity;
  const startTime = o.startTime ?? Date.UTC(2026, 0, 1) + seed * 86_400_000;
  const devices = infos.map(
    (info) =>
      new SimulatedDevice({
        host: o.host,
        port: o.port,
        encoder,
        ctx: { imei: info.imei, terminalId: info.terminalId },
        route: new Route({
          seed: seed * 100_000 + info.index,
          startLat: 56.95 + (info.index % 100) * 0.01,
          startLng: 24.1 + Math.floor(info.index / 100) * 0.01,
          startTime,
        }),
        pointsPerFrame,
        ackTimeoutMs: o.ackTimeoutMs ?? 10_000,
        onAck: (points, latency) => {
          progress.ackedFrames += 1;
          progress.ackedPoints += points.length;
          latencies.push(latency);
          o.onAck?.(info, points, latency);
        },
        onRefused: () => {
          progress.refused += 1;
        },
      }),
  );
  const ticker = o.onProgress
    ? setInterval(() => o.onProgress!({ ...progress, elapsedS: (performance.now() - started) / 1000 }), 1000)
    : null;
  const done = () => o.signal?.aborted === true || performance.now() >= deadline;

  await Promise.all(
    devices.map(async (device) => {
      let frames = 0;
      while (!done() && (o.framesPerDevice === undefined || frames < o.framesPerDevice)) {
        const acked = await device.step();
        if (acked) frames += 1;
        else await sleep(200); // back off before redialling
        if (o.intervalMs > 0) await sleep(o.intervalMs);
      }
      device.stop();
    }),
  );
  if (ticker) clearInterval(ticker);
  progress.reconnects = devices.reduce((n, d) => n + d.reconnects, 0);
  const elapsedS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ...progress,
    elapsedS,
    devices: infos,
    pointsPerSecond: progress.ackedPoints / elapsedS,
    ackLatencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] ?? 0 },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
