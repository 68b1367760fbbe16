/**
 * Concurrent registrations over HTTP: one wins each identifier, the losers
 * hold nothing afterwards, and the gateway binds only identifiers owned by a
 * device `GET /v1/devices` lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUuid } from '../../core/ids.js';
import { imeiFrom } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import { encoders } from '../simulator/run.js';
import { replyOf, until } from '../support/device-login.js';
import { startPlatformHarness, type Json, type PlatformHarness } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';

let p: PlatformHarness;
beforeAll(async () => {
  p = await startPlatformHarness();
});
afterAll(async () => {
  await p.close();
});

const register = (body: Json) => p.api('POST', '/v1/devices', { model: 'JC450', ...body });

/** Whether the gateway lets a Teltonika unit with this IMEI log in (a refused unit is answered 0x00 or disconnected). */
async function teltonikaLoginAccepted(imei: string): Promise<boolean> {
  const encoder = encoders.teltonika;
  const client = await TcpClient.open(p.platform.ports.teltonika!);
  try {
    const [hello] = encoder.handshake({ imei, terminalId: '', serial: 0 });
    client.send(hello!);
    const reply = await client.receive(replyOf(encoder)).catch((err: Error) => {
      if (/closed before/.test(err.message)) return null;
      throw err;
    });
    return reply !== null && encoder.isAck(reply, hello!, 0);
  } finally {
    client.close();
  }
}

async function listedImeis(): Promise<Set<string>> {
  const res = await p.api('GET', '/v1/devices?limit=200');
  return new Set(res.json.data.map((d: Json) => d.imei as string));
}

describe('concurrent registrations', () => {
  it('ten racing for one terminal number: one wins, and every losing IMEI is free and refused by the gateway until registered', async () => {
    const imeis = Array.from({ length: 10 }, (_, i) => imeiFrom(`3520980720${String(i).padStart(4, '0')}`));
    const results = await Promise.all(imeis.map((imei) => register({ imei, terminal_id: '13800000077' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const r of results) if (r.status === 409) expect(r.json.code).toBe('terminal_taken');

    const winner = imeis[results.findIndex((r) => r.status === 201)]!;
    const losers = imeis.filter((i) => i !== winner);
    const listed = await listedImeis();
    expect(listed.has(winner)).toBe(true);
    for (const imei of losers) {
      expect(listed.has(imei)).toBe(false);
      expect(await teltonikaLoginAccepted(imei)).toBe(false);
    }
    for (const imei of losers) expect((await register({ imei })).status).toBe(201);
    // Refusals are remembered for a few seconds, so the unit gets in on a later try.
    await until(() => teltonikaLoginAccepted(losers[0]!), 20_000, 'login of a newly registered unit');
  });

  it('ten racing for one IMEI with their own terminal numbers: one wins, and every losing terminal number is free', async () => {
    const imei = imeiFrom('35209807300001');
    const terminals = Array.from({ length: 10 }, (_, i) => `1390000${String(i).padStart(4, '0')}`);
    const results = await Promise.all(terminals.map((terminal_id) => register({ imei, terminal_id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const r of results) if (r.status === 409) expect(r.json.code).toBe('imei_taken');
    const winner = terminals[results.findIndex((r) => r.status === 201)]!;
    let n = 0;
    for (const terminal_id of terminals.filter((t) => t !== winner)) {
      expect((await register({ imei: imeiFrom(`3520980740${String(n++).padStart(4, '0')}`), terminal_id })).status).toBe(201);
    }
  });

  it('refuses a unit whose IMEI claim names a device that was never registered', async () => {
    const imei = imeiFrom('35209807500001');
    await p.platform.store.appendToStream(streams.imei(imei), [
      { id: randomUuid(), type: 'ImeiClaimed', data: { device_id: 'dev_never', customer_id: p.customerId, imei, model: 'x', terminal_id: null, claimed_at: Date.now() } },
    ]);
    expect(await teltonikaLoginAccepted(imei)).toBe(false);
  });
});
