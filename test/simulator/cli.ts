/**
 * npm run simulate -- --protocol teltonika|gt06|jt808 --devices N --interval-ms M [--duration S]
 *   [--host H] [--port P] [--points-per-frame K] [--api-url URL --api-key KEY] [--seed S]
 * With --api-key (or FLEET_API_KEY), the devices are registered first so the gateway accepts them.
 * --seed picks the fleet (IMEIs, routes); by default 1, 2 and 3 for teltonika, gt06 and jt808, so
 * the three can run side by side against one server.
 */
import { parseArgs } from 'node:util';
import type { ProtocolName } from '../../gateway/protocol.js';
import { liveStartTime, runSimulation } from './run.js';

const DEFAULT_PORTS: Record<ProtocolName, number> = { teltonika: 5027, gt06: 5023, jt808: 5015 };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      protocol: { type: 'string', default: 'teltonika' },
      devices: { type: 'string', default: '10' },
      'interval-ms': { type: 'string', default: '1000' },
      duration: { type: 'string', default: '30' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      'points-per-frame': { type: 'string', default: '1' },
      'api-url': { type: 'string', default: process.env.FLEET_API_URL ?? 'http://127.0.0.1:3000' },
      'api-key': { type: 'string', default: process.env.FLEET_API_KEY },
      seed: { type: 'string' },
    },
  });
  const protocol = values.protocol as ProtocolName;
  if (!(protocol in DEFAULT_PORTS)) throw new Error('--protocol must be teltonika, gt06 or jt808');
  const port = values.port ? Number(values.port) : DEFAULT_PORTS[protocol];
  const apiKey = values['api-key'];
  process.stdout.write(
    `simulating ${values.devices} ${protocol} device(s) -> ${values.host}:${port}` +
      (apiKey ? `, registering through ${values['api-url']}` : ' (devices must already be registered)') +
      '\n',
  );
  const timing = { intervalMs: Number(values['interval-ms']), durationS: Number(values.duration), pointsPerFrame: Number(values['points-per-frame']) };
  const summary = await runSimulation({
    protocol,
    host: values.host!,
    port,
    devices: Number(values.devices),
    ...timing,
    // Fixes of today, as a real fleet's, ending about now.
    startTime: liveStartTime(Date.now(), timing),
    ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
    ...(apiKey ? { api: { url: values['api-url']!, apiKey } } : {}),
    onProgress: (p) =>
      process.stdout.write(
        `  ${p.elapsedS.toFixed(0)}s: ${p.ackedFrames} frames / ${p.ackedPoints} points acked, ${p.refused} refused\n`,
      ),
  });
  process.stdout.write(
    [
      'summary',
      `  devices:       ${summary.devices.length}`,
      `  acked points:  ${summary.ackedPoints} in ${summary.ackedFrames} frames over ${summary.elapsedS.toFixed(1)} s (${summary.pointsPerSecond.toFixed(0)}/s)`,
      `  ack latency:   p50 ${summary.ackLatencyMs.p50.toFixed(1)} ms, p99 ${summary.ackLatencyMs.p99.toFixed(1)} ms, max ${summary.ackLatencyMs.max.toFixed(1)} ms`,
      `  reconnects:    ${summary.reconnects}, refused handshakes: ${summary.refused}`,
      '',
    ].join('\n'),
  );
  if (summary.refused > 0 && summary.ackedPoints === 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
