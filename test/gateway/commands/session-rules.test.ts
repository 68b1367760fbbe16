/**
 * The pure rules under the gateway's command sessions: a queued command turned into the wire
 * command (engine texts from the device, else the protocol's default), the relay state each
 * protocol's status records report (ProtocolModule.relayCheck), and the waits between tries.
 */
import { describe, expect, it } from 'vitest';
import { JT808_TRIES, replyWaitsMs } from '../../../gateway/commands/reply-waits.js';
import { wireCommandOf } from '../../../gateway/commands/wire.js';
import type { WireCommand } from '../../../gateway/protocol.js';
import { protocols } from '../../../gateway/protocols/index.js';

const outputCheckFor = (protocol: keyof typeof protocols, cmd: WireCommand) => protocols[protocol].relayCheck(cmd);

describe('wireCommandOf', () => {
  it('takes an engine text from the device, else the protocol default', () => {
    expect(wireCommandOf({ type: 'engine_stop', params: {} }, 'teltonika', null)).toEqual({ type: 'engine_stop', text: 'setdigout 1' });
    expect(wireCommandOf({ type: 'engine_resume', params: {} }, 'gt06', { engine_resume: 'HFYD,123456#' })).toEqual({ type: 'engine_resume', text: 'HFYD,123456#' });
    expect(wireCommandOf({ type: 'engine_stop', params: { when: 'now' } }, 'jt808', null)).toEqual({ type: 'engine_stop', text: '' });
  });

  it('carries each type\'s params', () => {
    expect(wireCommandOf({ type: 'set_report_interval', params: { interval_s: 30 } }, 'gt06', null)).toEqual({ type: 'set_report_interval', intervalS: 30 });
    expect(wireCommandOf({ type: 'text', params: { message: 'Hi' } }, 'jt808', null)).toEqual({ type: 'text', message: 'Hi' });
    expect(wireCommandOf({ type: 'custom', params: { hex: '8105f0' } }, 'jt808', null)).toEqual({ type: 'custom', hex: '8105f0' });
    expect(wireCommandOf({ type: 'custom', params: { text: 'getver' } }, 'teltonika', null)).toEqual({ type: 'custom', text: 'getver' });
    expect(wireCommandOf({ type: 'reboot', params: {} }, 'gt06', null)).toEqual({ type: 'reboot' });
  });
});

describe('each protocol\'s relayCheck', () => {
  it('reads Teltonika DOUT1 (IO 179) for setdigout texts only', () => {
    const stop = outputCheckFor('teltonika', { type: 'engine_stop', text: 'setdigout 1' })!;
    expect(stop.expected).toBe(true);
    expect(stop.read({ attributes: { io179: 1 } })).toBe(true);
    expect(stop.read({ attributes: { io179: 0 } })).toBe(false);
    expect(stop.read({ attributes: { io239: 1 } })).toBeNull();
    expect(outputCheckFor('teltonika', { type: 'engine_resume', text: 'setdigout 0?' })!.expected).toBe(false);
    expect(outputCheckFor('teltonika', { type: 'engine_stop', text: 'setdigout ?1' })).toBeNull();
    expect(outputCheckFor('teltonika', { type: 'engine_stop', text: 'lvcanblockengine' })).toBeNull();
  });

  it('reads GT06 terminal-info bit 7 and JT/T 808 status bits 10 and 11', () => {
    const gt06 = outputCheckFor('gt06', { type: 'engine_stop', text: 'Relay,1#' })!;
    expect([gt06.read({ attributes: { terminal_info: 0xc6 } }), gt06.read({ attributes: { terminal_info: 0x46 } })]).toEqual([true, false]);
    const jt808 = outputCheckFor('jt808', { type: 'engine_resume', text: '' })!;
    expect(jt808.expected).toBe(false);
    expect([0x400, 0x800, 0x3].map((status_flags) => jt808.read({ attributes: { status_flags } }))).toEqual([true, true, false]);
  });

  it('has nothing to check for other commands', () => {
    expect(outputCheckFor('gt06', { type: 'reboot' })).toBeNull();
  });
});

describe('replyWaitsMs', () => {
  it('grows the JT/T 808 wait per try and gives the others one', () => {
    expect(replyWaitsMs('jt808', 30_000)).toEqual([30_000, 60_000, 180_000]);
    expect(replyWaitsMs('jt808', 1)).toHaveLength(JT808_TRIES);
    expect(replyWaitsMs('gt06', 30_000)).toEqual([30_000]);
    expect(replyWaitsMs('teltonika', 5_000)).toEqual([5_000]);
  });
});
