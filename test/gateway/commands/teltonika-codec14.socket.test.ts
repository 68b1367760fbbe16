/**
 * Codec 14 replies through a real gateway socket: a logged-in Teltonika unit sends the
 * wiki's Codec 14 ACK; the gateway no longer refuses it (it did before commands), stores
 * nothing for it, answers nothing, and keeps acking the unit's records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../../core/imei.js';
import { teltonikaEncoder } from '../../simulator/encoders/teltonika.js';
import type { EncodeContext, SimPoint } from '../../simulator/encoders/types.js';
import { login, sendPoints } from '../../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../../support/gateway-harness.js';
import { TcpClient } from '../../support/tcp-client.js';

// wiki.teltonika-gps.com/view/Codec, "Codec 14": the unit's ACK to getver (type 0x06, IMEI, response).
const WIKI_C14_ACK = Buffer.from(
  '00000000000000ab0e0106000000a303520930814522515665723a30332e31382e31345f3034204750533a41584e5f352e31305f333333332048773a464d42313230' +
    '204d6f643a313520494d45493a33353230393330383134353232353120496e69743a323031382d31312d323220373a313320557074696d653a3137323334204d4143' +
    '3a363042444430303136323631205350433a312830292041584c3a30204f42443a3020424c3a312e362042543a340100007aae',
  'hex',
);

const IMEI = imeiFrom('35209308145225');
const ctx: EncodeContext = { imei: IMEI, terminalId: IMEI.slice(3), serial: 1 };
let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

function point(minutesAgo: number): SimPoint {
  const fixTime = Math.floor((Date.now() - minutesAgo * 60_000) / 1000) * 1000;
  return { fixTime, lat: 54.68, lng: 25.27, speedKmh: 0, headingDeg: 0, altitudeM: 110, satellites: 9, ignition: true, odometerM: 1000 };
}

describe('Teltonika Codec 14 over TCP', () => {
  it('takes a Codec 14 reply without refusing it, stores no record for it, and acks the next records', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI);
    const client = await TcpClient.open(h.ports.teltonika);
    await login(client, teltonikaEncoder, ctx);

    client.send(WIKI_C14_ACK);
    // Whatever the gateway did with the reply, it did before it handles the next packet on the connection.
    const { frame, reply } = await sendPoints(client, teltonikaEncoder, ctx, [point(2)]);
    expect(teltonikaEncoder.isAck(reply, frame, 1)).toBe(true);

    expect(h.gateway.stats.framesRefused).toBe(0);
    expect(h.gateway.stats.refusals.teltonika).toBeUndefined();
    expect(await h.events('PositionRecorded')).toHaveLength(1);
    expect(await h.events('StatusReported')).toHaveLength(0);
    expect(client.closed).toBe(false);
    client.close();
  });
});
