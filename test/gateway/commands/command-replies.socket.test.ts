/**
 * Device commands through a real gateway socket, one protocol at a time: a command queued while
 * the unit is offline is written when it logs in, as the bytes the protocol's encoder makes, and
 * the unit's real answers (corpus replies, with the match key of the command it received) move
 * it to `succeeded` or `failed` with the reply text. Engine commands on units that report their
 * relay wait for the status record that shows it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { crc16X25 } from '../../../gateway/codec/crc.js';
import { unescapeFrame } from '../../../gateway/protocols/jt808/frame.js';
import { protocols } from '../../../gateway/protocols/index.js';
import { teltonikaEncoder } from '../../simulator/encoders/teltonika.js';
import type { EncodeContext } from '../../simulator/encoders/types.js';
import { commandNow, commandReaches, nextFrame, testUnit } from '../../support/command-unit.js';
import { loadFrames } from '../../support/conformance.js';
import { sendPoints } from '../../support/device-login.js';
import { startGatewayHarness, type GatewayHarness } from '../../support/gateway-harness.js';
import { terminalMessage } from '../../support/jt808-message.js';
import { gt06Heartbeat } from '../../support/gt06-frames.js';

const corpus = loadFrames();
const corpusFrame = (index: number) => Buffer.from(corpus[index]!.hex, 'hex');

let h: GatewayHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** A GT06 answer with the server flag of the command the unit received, its CRC made good. */
function gt06Answer(corpusIndex: number, command: Buffer): Buffer {
  const frame = Buffer.from(corpusFrame(corpusIndex));
  command.copy(frame, 5, 5, 9);
  frame.writeUInt16BE(crc16X25(frame, 2, frame.length - 4), frame.length - 4);
  return frame;
}

describe('Teltonika commands over TCP', () => {
  it('writes a command queued while offline at login, and the codec 12 reply (#17) makes it succeeded with its text', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'teltonika', '35209308145201');
    const command = await queue({ type: 'position_request' });
    expect(command.status).toBe('queued');

    const client = await connect();
    const received = await nextFrame(client, protocols.teltonika);
    const expected = protocols.teltonika.encodeCommand({ type: 'position_request' }, { imei: ctx.imei, terminalId: null, serial: 0 });
    expect(received.toString('hex')).toBe(expected.bytes.toString('hex'));
    const sent = await commandReaches(h.store, command, 'sent');
    expect(sent.send_attempts).toBe(1);

    const reply = corpusFrame(17);
    const replyText = protocols.teltonika.decode(reply, { imei: ctx.imei, model: null, timezoneMinutes: null, frameIndex: 1, now: Date.now() }).replies[0]!.text;
    client.send(reply);
    const done = await commandReaches(h.store, command, 'succeeded');
    expect(done.response).toEqual({ text: replyText, result_code: null, raw_hex: corpus[17]!.hex });
    expect(done.error).toBeNull();
    client.close();
  });

  it('keeps one command in flight and matches replies in order', async () => {
    h = await startGatewayHarness();
    const { queue, connect } = await testUnit(h, 'teltonika', '35209308145202');
    const first = await queue({ type: 'reboot' });
    const second = await queue({ type: 'custom', params: { text: 'getver' } });
    const client = await connect();

    expect((await nextFrame(client, protocols.teltonika)).toString('latin1')).toContain('cpureset');
    expect((await commandNow(h.store, second)).status).toBe('queued');
    client.send(corpusFrame(40));
    expect((await commandReaches(h.store, first, 'succeeded')).response?.text).toBe('#FM2=262032761721396,26203,07.02.05');
    expect((await nextFrame(client, protocols.teltonika)).toString('latin1')).toContain('getver');
    client.send(corpusFrame(18));
    await commandReaches(h.store, second, 'succeeded');
    client.close();
  });

  it('rejects a command the bound protocol cannot carry, and writes nothing', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'teltonika', '35209308145203');
    // Queued before the device's protocol was known: every type is accepted then.
    const command = await queue({ type: 'text', params: { message: 'Hello' } }, null);
    const client = await connect();
    const rejected = await commandReaches(h.store, command, 'rejected');
    expect(rejected.error).toMatch(/^unsupported: /);
    // The next bytes the unit gets are the ack of its records: no command went before them.
    const fix = { fixTime: Math.floor(Date.now() / 1000) * 1000, lat: 54.68, lng: 25.27, speedKmh: 0, headingDeg: 0, altitudeM: 110, satellites: 9, ignition: true, odometerM: 1000 };
    const { frame, reply } = await sendPoints(client, teltonikaEncoder, ctx, [fix]);
    expect(teltonikaEncoder.isAck(reply, frame, 1)).toBe(true);
    expect(client.unread.length).toBe(0);
    client.close();
  });
});

describe('GT06 commands over TCP', () => {
  it('matches the 0x15 answer (#193) by the echoed server flag: failed, with the text', async () => {
    h = await startGatewayHarness();
    const { queue, connect } = await testUnit(h, 'gt06', '35209808145211');
    const command = await queue({ type: 'custom', params: { text: 'HFYD,000000#' } });
    const client = await connect();
    const received = await nextFrame(client, protocols.gt06);
    expect(received[3]).toBe(0x80);
    expect(received.subarray(9, 9 + 'HFYD,000000#'.length).toString('latin1')).toBe('HFYD,000000#');

    client.send(gt06Answer(193, received));
    const failed = await commandReaches(h.store, command, 'failed');
    expect(failed.error).toBe('device_failed');
    expect(failed.response?.text).toBe('Already in the state of fuel supply to resume,the command is not running!');
    client.close();
  });

  it('matches 0x21 answers, ASCII (#185) and UTF-16BE (#158), each to its own command', async () => {
    h = await startGatewayHarness();
    const { queue, connect } = await testUnit(h, 'gt06', '35209808145215');
    const where = await queue({ type: 'position_request' });
    const custom = await queue({ type: 'custom', params: { text: 'STATUS#' } });
    const client = await connect();
    const first = await nextFrame(client, protocols.gt06);
    const second = await nextFrame(client, protocols.gt06);
    expect(first.toString('latin1')).toContain('WHERE#');
    expect(second.toString('latin1')).toContain('STATUS#');

    client.send(gt06Answer(158, second));
    client.send(gt06Answer(185, first));
    expect((await commandReaches(h.store, custom, 'failed')).response?.text).toBe('Command error!');
    expect((await commandReaches(h.store, where, 'succeeded')).response?.text).toMatch(/^Current position!Lat:N54\.739332,Lon:E25\.273270,/);
    client.close();
  });

  it('ignores an answer whose server flag is no command of this connection', async () => {
    h = await startGatewayHarness();
    const { queue, connect } = await testUnit(h, 'gt06', '35209808145212');
    const command = await queue({ type: 'reboot' });
    const client = await connect();
    const received = await nextFrame(client, protocols.gt06);
    const other = Buffer.from(received);
    other.writeUInt32BE((received.readUInt32BE(5) + 7) >>> 0, 5);
    client.send(gt06Answer(195, other));
    client.send(gt06Heartbeat(0x02, 9));
    await nextFrame(client, protocols.gt06); // the heartbeat's echo: the answer before it was handled
    expect((await commandNow(h.store, command)).status).toBe('sent');
    client.send(gt06Answer(195, received));
    await commandReaches(h.store, command, 'succeeded');
    client.close();
  });

  it('acknowledges an engine stop on the unit\'s word (#194) and succeeds once a heartbeat shows the relay cut', async () => {
    h = await startGatewayHarness();
    const { queue, connect } = await testUnit(h, 'gt06', '35209808145213');
    const command = await queue({ type: 'engine_stop', params: { when: 'now' } });
    const client = await connect();
    const received = await nextFrame(client, protocols.gt06);
    expect(received.toString('latin1')).toContain('Relay,1#');

    client.send(gt06Answer(194, received));
    const acknowledged = await commandReaches(h.store, command, 'acknowledged');
    expect(acknowledged.response?.text).toBe('Cut off the fuel supply: Success!');
    client.send(gt06Heartbeat(0x80 | 0x40, 10)); // bit 7: oil and electricity disconnected
    const done = await commandReaches(h.store, command, 'succeeded');
    expect(done.response?.text).toBe('Cut off the fuel supply: Success!');
    client.close();
  });

  it('fails an engine resume whose next heartbeat still shows the relay cut', async () => {
    h = await startGatewayHarness();
    const { queue, connect } = await testUnit(h, 'gt06', '35209808145214');
    const command = await queue({ type: 'engine_resume' });
    const client = await connect();
    const received = await nextFrame(client, protocols.gt06);
    expect(received.toString('latin1')).toContain('Relay,0#');
    client.send(gt06Answer(195, received));
    await commandReaches(h.store, command, 'acknowledged');
    client.send(gt06Heartbeat(0x80, 11));
    expect((await commandReaches(h.store, command, 'failed')).error).toBe('output_unchanged');
    client.close();
  });
});

describe('JT/T 808 commands over TCP', () => {
  const phone = (ctx: EncodeContext) => ctx.terminalId!.padStart(12, '0');
  const serialOf = (frame: Buffer) => unescapeFrame(frame).readUInt16BE(11);

  it('matches 0x0001 by the platform serial: result 0 succeeded, result 3 failed as unsupported', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'jt808', '35209807650101');
    const client = await connect();
    const reboot = await queue({ type: 'reboot' });
    const interval = await queue({ type: 'set_report_interval', params: { interval_s: 60 } });

    const first = await nextFrame(client, protocols.jt808);
    const second = await nextFrame(client, protocols.jt808);
    expect(unescapeFrame(first).readUInt16BE(1)).toBe(0x8105);
    expect(unescapeFrame(second).readUInt16BE(1)).toBe(0x8103);
    const answer = (frame: Buffer, result: number) =>
      terminalMessage(0x0001, phone(ctx), 0x30 + result, Buffer.from([serialOf(frame) >> 8, serialOf(frame) & 0xff, frame[2]!, frame[3]!, result]));
    client.send(answer(second, 3));
    client.send(answer(first, 0));
    const rebooted = await commandReaches(h.store, reboot, 'succeeded');
    expect(rebooted.response?.result_code).toBe(0);
    const refused = await commandReaches(h.store, interval, 'failed');
    expect(refused).toMatchObject({ error: 'unsupported', response: { result_code: 3 } });
    client.close();
  });

  it('takes the 0x1300 text answer (#311\'s body) to a text message', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'jt808', '35209807650102');
    const command = await queue({ type: 'text', params: { message: 'Drive safe' } });
    const client = await connect();
    const received = await nextFrame(client, protocols.jt808);
    expect(unescapeFrame(received).readUInt16BE(1)).toBe(0x8300);

    const body = Buffer.from(unescapeFrame(corpusFrame(311)).subarray(13, -2));
    body.writeUInt16BE(serialOf(received), 0);
    client.send(terminalMessage(0x1300, phone(ctx), 0x40, body));
    expect((await commandReaches(h.store, command, 'succeeded')).response?.text).toBe('Set OK!');
    client.close();
  });

  it('sends a message again on the growing timeout, then fails it with no_reply', async () => {
    h = await startGatewayHarness({ commandReplyTimeoutMs: 150 });
    const { queue, connect } = await testUnit(h, 'jt808', '35209807650103');
    const command = await queue({ type: 'position_request' });
    const client = await connect();
    const tries = [await nextFrame(client, protocols.jt808), await nextFrame(client, protocols.jt808), await nextFrame(client, protocols.jt808)];
    expect(new Set(tries.map((t) => t.toString('hex'))).size).toBe(1);
    expect((await commandReaches(h.store, command, 'failed')).error).toBe('no_reply');
    expect((await commandNow(h.store, command)).send_attempts).toBe(1);
    client.close();
  });
});
