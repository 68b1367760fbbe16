/**
 * The webhook bench's reference: a bare keep-alive HTTP client, a process of
 * its own, posting signed webhook-shaped requests to the receiver as fast as
 * it can (CONCURRENCY in flight) for SECONDS. What the receiver and this
 * machine can take, to compare the platform's deliveries/s with.
 *   node webhooks-reference-client.js URL SECONDS CONCURRENCY BODY_BYTES
 * Sends {sent, seconds, cpu} over IPC when done.
 */
import { Agent, request } from 'node:http';
import { signWebhook } from '../../webhook-delivery/signature.js';

const [url, secondsArg, concurrencyArg, bodyBytesArg] = process.argv.slice(2);
const seconds = Number(secondsArg);
const concurrency = Number(concurrencyArg);
const secret = 'whsec_reference';
const body = Buffer.from(JSON.stringify({ event: 'position.updated', padding: 'x'.repeat(Math.max(0, Number(bodyBytesArg) - 50)) }));
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url!);

function post(): Promise<boolean> {
  const ts = Math.floor(Date.now() / 1000);
  return new Promise((resolve) => {
    const req = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'x-service-timestamp': String(ts),
          'x-service-signature': signWebhook(secret, ts, body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode !== undefined && res.statusCode < 300));
      },
    );
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

async function main(): Promise<void> {
  let sent = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) if (await post()) sent += 1;
    }),
  );
  process.send!({ sent, seconds: (performance.now() - started) / 1000, cpu: process.cpuUsage() });
  agent.destroy();
  process.disconnect();
}

void main();
