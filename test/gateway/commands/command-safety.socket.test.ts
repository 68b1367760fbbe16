/**
 * What must never go out, and what goes out only once, over real sockets: a command past its
 * time to live is expired at login and not written; an engine stop waits for a fix that shows
 * the vehicle stopped (unless asked `when: now`); a command whose outcome was lost is sent once
 * more and then failed; with two gateway nodes on one store, the node holding the unit sends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../core/clock.js';
import { markSent } from '../../../core/commands/device-commands.js';
import { protocols } from '../../../gateway/protocols/index.js';
import { Gateway } from '../../../gateway/server.js';
import { gt06Encoder } from '../../simulator/encoders/gt06.js';
import { teltonikaEncoder } from '../../simulator/encoders/teltonika.js';
import type { EncodeContext, ProtocolEncoder, SimPoint } from '../../simulator/encoders/types.js';
import { commandNow, commandReaches, nextFrame, testUnit } from '../../support/command-unit.js';
import { loadFrames } from '../../support/conformance.js';
import { sendPoints } from '../../support/device-login.js';
import { startGatewayHarness, testGatewayOptions, type GatewayHarness } from '../../support/gateway-harness.js';
import { TcpClient } from '../../support/tcp-client.js';

const corpus = loadFrames();
const fix = (speedKmh: number): SimPoint => ({
  fixTime: Math.floor(Date.now() / 1000) * 1000,
  lat: 54.68,
  lng: 25.27,
  speedKmh,
  headingDeg: 90,
  altitudeM: 110,
  satellites: 9,
  ignition: true,
  odometerM: 1000,
});

let h: GatewayHarness | null = null;
const extraNodes: Gateway[] = [];
afterEach(async () => {
  for (const node of extraNodes.splice(0)) await node.stop();
  await h?.close();
  h = null;
});

/** Sends one fix and checks the very next bytes are its ack: nothing was written before it. */
async function onlyAckFor(client: TcpClient, encoder: ProtocolEncoder, ctx: EncodeContext, point: SimPoint): Promise<void> {
  const { frame, reply } = await sendPoints(client, encoder, ctx, [point]);
  expect(encoder.isAck(reply, frame, 1), `ack, got ${reply.toString('hex')}`).toBe(true);
  expect(client.unread.length).toBe(0);
}

describe('device commands that must not go out', () => {
  it('expires a command whose ttl_s passed before the unit logged in, and writes nothing', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'teltonika', '35209308145301');
    const command = await queue({ type: 'reboot', ttl_s: 1 });
    await new Promise((r) => setTimeout(r, 2000));

    const client = await connect();
    const expired = await commandReaches(h.store, command, 'expired');
    expect(expired).toMatchObject({ error: 'expired', sent_at: null, send_attempts: 0 });
    await onlyAckFor(client, teltonikaEncoder, ctx, fix(0));
    expect(await h.events('DeviceCommandSent')).toHaveLength(0);
    client.close();
  });

  it('holds an engine stop while the vehicle moves and sends it on the first stationary fix; `when: now` goes at once', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'gt06', '35209808145302');
    const client = await connect();
    await onlyAckFor(client, gt06Encoder, ctx, fix(60));

    const held = await queue({ type: 'engine_stop' });
    const now = await queue({ type: 'engine_stop', params: { when: 'now' } });
    expect(held.waiting_for).toBe('vehicle_stopped');
    // Both reach the node in queue order: when the `now` one arrives the held one was already looked at.
    const first = await nextFrame(client, protocols.gt06);
    expect(first.toString('latin1')).toContain('Relay,1#');
    expect((await commandReaches(h.store, now, 'sent')).sent_at).not.toBeNull();
    expect(await commandNow(h.store, held)).toMatchObject({ status: 'queued', waiting_for: 'vehicle_stopped' });

    await onlyAckFor(client, gt06Encoder, ctx, { ...fix(42), fixTime: fix(42).fixTime + 1000 });
    expect((await commandNow(h.store, held)).status).toBe('queued');

    const { reply } = await sendPoints(client, gt06Encoder, ctx, [{ ...fix(0), fixTime: fix(0).fixTime + 2000 }]);
    expect(reply[3]).not.toBe(0x80);
    const second = await nextFrame(client, protocols.gt06);
    expect(second[3]).toBe(0x80);
    expect(second.toString('latin1')).toContain('Relay,1#');
    expect(second.readUInt32BE(5)).not.toBe(first.readUInt32BE(5)); // a server flag of its own
    expect((await commandReaches(h.store, held, 'sent')).waiting_for).toBeNull();
    client.close();
  });
});

describe('device commands sent once', () => {
  it('sends a command whose outcome was lost once more, then fails it without a third send', async () => {
    h = await startGatewayHarness();
    const { ctx, queue, connect } = await testUnit(h, 'teltonika', '35209308145303');
    const command = await queue({ type: 'position_request' });
    // A node appended Sent and died before (or while) it wrote the bytes.
    await markSent(h.store, systemClock, command);

    const first = await connect();
    expect((await nextFrame(first, protocols.teltonika)).toString('latin1')).toContain('getgps');
    expect((await commandReaches(h.store, command, 'sent')).send_attempts).toBe(2);
    first.close();
    await first.closedPromise;

    const again = await connect();
    expect((await commandReaches(h.store, command, 'failed')).error).toBe('no_reply');
    await onlyAckFor(again, teltonikaEncoder, ctx, fix(0));
    expect(await h.events('DeviceCommandSent')).toHaveLength(2);
    again.close();
  });

  it('is sent by the gateway node that holds the unit, once, with two nodes on one store', async () => {
    h = await startGatewayHarness();
    const other = new Gateway(testGatewayOptions(h.store));
    extraNodes.push(other);
    const otherPorts = await other.start();
    const { ctx, queue, connect } = await testUnit(h, 'teltonika', '35209308145304');
    const client = await connect(otherPorts.teltonika);
    await onlyAckFor(client, teltonikaEncoder, ctx, fix(0));

    const command = await queue({ type: 'reboot' });
    expect((await nextFrame(client, protocols.teltonika)).toString('latin1')).toContain('cpureset');
    client.send(Buffer.from(corpus[17]!.hex, 'hex'));
    await commandReaches(h.store, command, 'succeeded');
    expect(await h.events('DeviceCommandSent')).toHaveLength(1);
    client.close();
  });
});
