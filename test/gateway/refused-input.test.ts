/**
 * Refused input over real sockets: a connection that sends a run of refused
 * frames (or junk) is closed, and a flood of them writes a bounded log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { MAX_REFUSED_IN_A_ROW } from '../../gateway/connection.js';
import type { ProtocolName } from '../../gateway/protocol.js';
import { encoders } from '../simulator/run.js';
import { Route } from '../simulator/route.js';
import type { EncodeContext } from '../simulator/encoders/types.js';
import { login, sendPoints, until } from '../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gateway-harness.js';
import { capturingLogger } from '../support/platform-harness.js';
import { TcpClient } from '../support/tcp-client.js';

const IMEI = imeiFrom('35209807123456');
let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const repeat = (unit: number[], times: number) => Buffer.concat(Array.from({ length: times }, () => Buffer.from(unit)));

/** 100,000 junk frames of each kind the probe sent, and the reason each is refused for. */
const floods: Array<{ name: string; protocol: ProtocolName; bytes: Buffer; reason: string }> = [
  // JT/T 808: 7E · one content byte · 7E, too short for a header.
  { name: 'JT/T 808 7e 00 7e', protocol: 'jt808', bytes: repeat([0x7e, 0x00, 0x7e], 100_000), reason: 'truncated' },
  // GT06: a 6-byte stub frame with no serial or CRC.
  { name: 'GT06 78 78 01 08 0d 0a', protocol: 'gt06', bytes: repeat([0x78, 0x78, 0x01, 0x08, 0x0d, 0x0a], 100_000), reason: 'bad_checksum' },
  // GT06: bytes with no start marker at all, skipped as junk.
  { name: 'GT06 00 01 02', protocol: 'gt06', bytes: repeat([0x00, 0x01, 0x02], 100_000), reason: 'junk' },
  // Teltonika: a one-character "IMEI" packet that is no number.
  { name: 'Teltonika 00 01 41', protocol: 'teltonika', bytes: repeat([0x00, 0x01, 0x41], 100_000), reason: 'malformed' },
];

describe('a flood of refused frames', () => {
  it.each(floods)('$name ×100,000: the connection is closed and the log stays under 1 MB', async ({ protocol, bytes, reason }) => {
    const captured = capturingLogger('info');
    h = await startGatewayHarness({ log: captured.log });
    const client = await TcpClient.open(h.ports[protocol]);
    client.send(bytes);
    await until(() => client.closed, 20_000, 'connection closed');
    expect(captured.bytes()).toBeLessThan(1_000_000);
    // One line for the first refusal, one for the close: not one per frame.
    const refusalLines = captured.lines.filter((l) => l.includes('refused'));
    expect(refusalLines.length).toBeLessThanOrEqual(2);
    expect(refusalLines[0]).toMatch(/"hex":"[0-9a-f]{1,128}(…\(\d+ bytes\))?"/);
    expect(h.gateway.stats.refusals[protocol]?.[reason]).toBeGreaterThanOrEqual(1);
    expect(h.gateway.stats.closedForRefusals).toBe(1);
  });

  it('closes a logged-in Teltonika unit that sends a run of bad-CRC packets, after its good ones were stored', async () => {
    h = await startGatewayHarness();
    await h.register(IMEI);
    const encoder = encoders.teltonika;
    const ctx: EncodeContext = { imei: IMEI, terminalId: '', serial: 1 };
    const client = await TcpClient.open(h.ports.teltonika);
    await login(client, encoder, ctx);
    const route = new Route({ seed: 5, startLat: 56.95, startLng: 24.1, startTime: Date.now() - 60_000 });
    const { frame, reply } = await sendPoints(client, encoder, { ...ctx, serial: 2 }, [route.next()]);
    expect(encoder.isAck(reply, frame, 1)).toBe(true);
    const bad = Buffer.from(encoder.encode([route.next()], { ...ctx, serial: 3 }));
    bad[bad.length - 1]! ^= 0xff; // CRC off
    // Fewer than the run: still open, and a good frame resets the count.
    for (let i = 0; i < MAX_REFUSED_IN_A_ROW - 1; i++) client.send(bad);
    const good = await sendPoints(client, encoder, { ...ctx, serial: 4 }, [route.next()]);
    expect(encoder.isAck(good.reply, good.frame, 1)).toBe(true);
    for (let i = 0; i < MAX_REFUSED_IN_A_ROW - 1; i++) client.send(bad);
    expect(client.closed).toBe(false);
    const again = await sendPoints(client, encoder, { ...ctx, serial: 5 }, [route.next()]);
    expect(encoder.isAck(again.reply, again.frame, 1)).toBe(true);
    // Then a whole run: closed.
    for (let i = 0; i < MAX_REFUSED_IN_A_ROW; i++) client.send(bad);
    await until(() => client.closed, 10_000, 'connection closed');
    expect(await h.events('PositionRecorded')).toHaveLength(3);
    expect(h.gateway.stats.refusals.teltonika?.bad_checksum).toBe(2 * (MAX_REFUSED_IN_A_ROW - 1) + MAX_REFUSED_IN_A_ROW);
  });

  it('keeps the log bounded when one address reconnects to send junk again and again', async () => {
    const captured = capturingLogger('info');
    h = await startGatewayHarness({ log: captured.log });
    const started = Date.now();
    for (let i = 0; i < 100; i++) {
      const client = await TcpClient.open(h.ports.jt808);
      client.send(repeat([0x7e, 0x00, 0x7e], 1000));
      await until(() => client.closed, 20_000, 'connection closed');
    }
    const windows = Math.ceil((Date.now() - started) / 10_000) + 1;
    expect(h.gateway.stats.closedForRefusals).toBe(100);
    // Per address: at most one line of each kind (first refusal, closing) per 10 s window.
    expect(captured.lines.filter((l) => l.includes('refused')).length).toBeLessThanOrEqual(2 * windows);
  });
});
