/**
 * The 0x8203 confirmation of a latched alarm over a real socket: a registered, authenticated
 * terminal reports an SOS and gets its 0x8001 and then the 0x8203 for that report; an
 * ordinary report gets the 0x8001 alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../../core/imei.js';
import { jt808 } from '../../../gateway/protocols/jt808/index.js';
import { unescapeFrame } from '../../../gateway/protocols/jt808/frame.js';
import { jt808Encoder } from '../../simulator/encoders/jt808.js';
import type { EncodeContext, SimPoint } from '../../simulator/encoders/types.js';
import { login } from '../../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../../support/gateway-harness.js';
import { TcpClient } from '../../support/tcp-client.js';

const IMEI = imeiFrom('35209807650055');
const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

function point(minutesAgo: number, alarm?: SimPoint['alarm']): SimPoint {
  const fixTime = Math.floor((Date.now() - minutesAgo * 60_000) / 1000) * 1000;
  return { fixTime, lat: 31.23, lng: 121.47, speedKmh: 0, headingDeg: 0, altitudeM: 5, satellites: 9, ignition: true, odometerM: 1000, ...(alarm ? { alarm } : {}) };
}

/** Message id and body of each whole message received, once `count` of them are in. */
function messages(count: number) {
  return (buf: Buffer) => {
    const split = jt808.splitFrames(buf);
    if (split.frames.length < count) return null;
    const taken = split.frames.slice(0, count).map((f) => {
      const bytes = unescapeFrame(f);
      return { msgId: bytes.readUInt16BE(1), body: bytes.subarray(13, -2).toString('hex') };
    });
    const consumed = split.frames.slice(0, count).reduce((n, f) => n + f.length, split.skipped);
    return { value: taken, consumed };
  };
}

describe('JT/T 808 latched alarm confirmation over TCP', () => {
  it('answers an SOS report with 0x8001 then 0x8203 for its serial and bit 0, and stores the alarm', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI, { terminalId: ctx.terminalId });
    const client = await TcpClient.open(h.ports.jt808);
    await login(client, jt808Encoder, ctx);

    client.send(jt808Encoder.encode([point(3)], { ...ctx, serial: 0x0020 }));
    expect((await client.receive(messages(1))).map((m) => m.msgId)).toEqual([0x8001]);

    client.send(jt808Encoder.encode([point(2, 'event.sos')], { ...ctx, serial: 0x0021 }));
    const [ack, confirmation] = await client.receive(messages(2));
    expect(ack).toEqual({ msgId: 0x8001, body: '0021020000' });
    expect(confirmation).toEqual({ msgId: 0x8203, body: '002100000001' });
    expect((await h.events('AlarmReported')).map((e) => (e.data as { kind: string }).kind)).toEqual(['event.sos']);
    client.close();
  });
});
