/**
 * POST /v1/webhooks/{id}/test over a real HTTP server, with a real local
 * receiver checking the signature: its body is optional, so no body (as
 * `curl -X POST` sends it), an empty JSON body and {} all send the default
 * signed sample. Requests are written byte for byte, so no client library
 * adds a Content-Type or Content-Length of its own.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let p: PlatformHarness;
let apiKey: string;

beforeAll(async () => {
  p = await startPlatformHarness();
  const key = await p.api('POST', '/v1/api-keys', { name: 'raw', scopes: ['webhooks:write'] });
  expect(key.status).toBe(201);
  apiKey = key.json.secret;
  expect(apiKey).toMatch(/^fleet_key_/);
}, 60_000);

afterAll(async () => {
  await p.close();
});

/** A request written byte for byte (no header added by a client library), answered on a closed connection. */
function rawRequest(path: string, headers: string[], body = ''): Promise<{ status: number; json: Json }> {
  const { hostname, port } = new URL(p.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write([`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', `Authorization: Bearer ${apiKey}`, ...headers, '', body].join('\r\n'));
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, payload = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(head!.split(' ')[1]), json: payload ? JSON.parse(payload) : null });
    });
  });
}

describe('POST /v1/webhooks/{id}/test', () => {
  let rx: WebhookReceiver;
  afterAll(async () => rx?.close());

  it('sends the default signed sample with no body, an empty JSON body or {}; a kind when asked', async () => {
    rx = await startWebhookReceiver();
    const created = await p.api('POST', '/v1/webhooks', { url: rx.url, events: ['*'] });
    expect(created.status).toBe(201);
    const { id, secret } = created.json as { id: string; secret: string };
    const path = `/v1/webhooks/${id}/test`;

    const cases: Array<[string, string[], string, string]> = [
      ['no body, no Content-Type (curl -X POST)', [], '', 'position.updated'],
      ['no body, Content-Length: 0', ['Content-Length: 0'], '', 'position.updated'],
      ['an empty JSON body', ['Content-Type: application/json', 'Content-Length: 0'], '', 'position.updated'],
      ['{}', ['Content-Type: application/json', 'Content-Length: 2'], '{}', 'position.updated'],
      ['a kind', ['Content-Type: application/json', 'Content-Length: 26'], '{"event":"device.offline"}', 'device.offline'],
    ];
    for (const [what, headers, body, kind] of cases) {
      const before = rx.received.length;
      const res = await rawRequest(path, headers, body);
      expect(res.status, `${what}: ${JSON.stringify(res.json)}`).toBe(200);
      expect(res.json, what).toMatchObject({ delivered: true, status: 200, error: null });
      await rx.waitFor(before + 1);
      const got = rx.received[before]!;
      expect(signatureValid(got, secret), what).toBe(true);
      expect(got.raw, what).toBe(res.json.body);
      expect(got.json, what).toMatchObject({ event: kind, test: true, event_id: res.json.event_id });
      expect(got.headers['x-service-delivery-id'], what).toBe(res.json.delivery_id);
    }

    // Still refused: a body that is not an object of known fields, or of a type the API does not take.
    const bad = await rawRequest(path, ['Content-Type: application/json', 'Content-Length: 16'], '{"event":"nope"}');
    expect(bad.json.errors[0].pointer).toBe('/body/event');
    const notObject = await rawRequest(path, ['Content-Type: application/json', 'Content-Length: 2'], '[]');
    expect(notObject.status).toBe(400);
    const unknownField = await rawRequest(path, ['Content-Type: application/json', 'Content-Length: 13'], '{"colour":""}');
    expect(unknownField.json.errors[0].pointer).toBe('/body/colour');
    const text = await rawRequest(path, ['Content-Type: text/plain', 'Content-Length: 2'], 'hi');
    expect(text.status).toBe(415);
  });
});
