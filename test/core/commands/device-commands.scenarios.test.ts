/** Device commands as given / when / then on the device's commands stream, and dispatch decided from a fix. */
import { describe, expect, it } from 'vitest';
import { requestCommand } from '../../../core/commands/command-requests.js';
import { dispatchDecision, type LatestFix } from '../../../core/commands/dispatch.js';
import { cancelCommand, expireCommand, markSent, markTimedOut, mayResend, recordReply, rejectCommand, unfinishedCommands } from '../../../core/commands/device-commands.js';
import type { CommandSnapshot, DomainEvent } from '../../../core/events.js';
import { engineCommandText } from '../../../core/command-types.js';
import { streams } from '../../../core/streams.js';
import { T0, given } from '../../support/given-when-then.js';

const registered = (protocol: 'teltonika' | 'gt06' | 'jt808' | null): DomainEvent => ({
  type: 'DeviceRegistered',
  data: { device_id: 'dev_1', customer_id: 'cus_a', imei: '356938035643809', model: 'FMB920', name: null, group_id: null, driver_id: null, terminal_id: null, protocol, created_at: T0 - 60_000 },
});
const teltonika = { [streams.device('dev_1')]: [registered('teltonika')] };
const COMMANDS = streams.commands('dev_1');

/** A command of dev_1 as queued at T0, with `changes` over it. */
function snapshot(changes: Partial<CommandSnapshot> = {}): CommandSnapshot {
  return {
    command_id: 'cmd_1', device_id: 'dev_1', customer_id: 'cus_a', type: 'reboot', params: {}, status: 'queued', waiting_for: null,
    created_at: T0, sent_at: null, acknowledged_at: null, completed_at: null, expires_at: T0 + 86_400_000, response: null, error: null,
    send_attempts: 0, ...changes,
  };
}
const event = (type: string, command: CommandSnapshot, extra: Record<string, unknown> = {}): DomainEvent =>
  ({ type, data: { command_id: command.command_id, device_id: 'dev_1', customer_id: 'cus_a', at: T0, command, ...extra } }) as DomainEvent;
const queued = (changes: Partial<CommandSnapshot> = {}) => event('DeviceCommandQueued', snapshot(changes));
const sentCommand = snapshot({ status: 'sent', sent_at: T0 + 1000, send_attempts: 1 });
const withHistory = (...events: DomainEvent[]): Record<string, DomainEvent[]> => ({ ...teltonika, [COMMANDS]: events });
const ref = { device_id: 'dev_1', command_id: 'cmd_1' };

describe('queueing a command', () => {
  it('queues a reboot with the 24 h default time to live', async () => {
    const then = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'reboot' }));
    const id = then.result!.command_id;
    expect(id).toMatch(/^cmd_[0-9a-z]{26}$/);
    expect(then.appended).toEqual({ [COMMANDS]: [event('DeviceCommandQueued', snapshot({ command_id: id }))] });
  });

  it('holds an engine stop for a stopped vehicle with 300 s to live, and sends at once with when: now', async () => {
    const held = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'engine_stop' }));
    expect(held.appended[COMMANDS]![0]!.data).toMatchObject({ command: { status: 'queued', waiting_for: 'vehicle_stopped', expires_at: T0 + 300_000 } });
    const now = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'engine_stop', params: { when: 'now' } }));
    expect(now.appended[COMMANDS]![0]!.data).toMatchObject({ command: { waiting_for: null, params: { when: 'now' } } });
  });

  it("refuses another customer's device as not found", async () => {
    const then = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_b', device_id: 'dev_1', type: 'reboot' }));
    expect(then.refused()).toMatchObject({ kind: 'not_found' });
    expect(then.appended).toEqual({});
  });

  it('refuses a type the protocol lacks, naming the type and the protocol', async () => {
    const then = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'text', params: { message: 'hi' } }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'command_type_unsupported', field: '/type' });
    expect(then.refused().detail).toContain('teltonika protocol has no command text');
  });

  it('accepts every type while the protocol is not bound yet', async () => {
    const then = await given({ [streams.device('dev_1')]: [registered(null)] }).when((store, clock) =>
      requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'text', params: { message: 'Call the office' } }),
    );
    expect(then.appended[COMMANDS]).toHaveLength(1);
  });

  it.each([
    ['set_report_interval', { interval_s: 4 }, '/params/interval_s'],
    ['set_report_interval', { interval_s: 86_401 }, '/params/interval_s'],
    ['set_report_interval', {}, '/params/interval_s'],
    ['custom', { hex: 'abc' }, '/params/hex'],
    ['custom', { hex: 'ab'.repeat(1025) }, '/params/hex'],
    ['custom', { text: 'getver', hex: '00' }, '/params'],
    ['custom', {}, '/params'],
    ['custom', { text: 'x'.repeat(513) }, '/params/text'],
    ['reboot', { force: 1 }, '/params/force'],
    ['engine_stop', { when: 'later' }, '/params/when'],
  ] as const)('refuses %s with params %j at %s', async (type, params, field) => {
    const then = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type, params }));
    expect(then.refused()).toMatchObject({ kind: 'invalid', code: 'validation_failed', field });
  });

  it('takes params at their limits', async () => {
    for (const params of [{ interval_s: 5 }, { interval_s: 86_400 }]) {
      const then = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'set_report_interval', params }));
      expect(then.appended[COMMANDS]![0]!.data).toMatchObject({ command: { params } });
    }
    const hex = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'custom', params: { hex: 'AB'.repeat(1024) } }));
    expect(hex.appended[COMMANDS]![0]!.data).toMatchObject({ command: { params: { hex: 'ab'.repeat(1024) } } });
  });

  it('refuses a time to live over 7 days and keeps one of exactly 7 days', async () => {
    const over = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'reboot', ttl_s: 7 * 86_400 + 1 }));
    expect(over.refused()).toMatchObject({ kind: 'invalid', field: '/ttl_s' });
    const week = await given(teltonika).when((store, clock) => requestCommand(store, clock, { customer_id: 'cus_a', device_id: 'dev_1', type: 'reboot', ttl_s: 7 * 86_400 }));
    expect(week.appended[COMMANDS]![0]!.data).toMatchObject({ command: { expires_at: T0 + 7 * 86_400_000 } });
  });
});

describe('Idempotency-Key', () => {
  const request = { customer_id: 'cus_a', device_id: 'dev_1', type: 'set_report_interval' as const, params: { interval_s: 60 }, idempotency_key: 'k-1' };

  it('a second request under the key within 24 h gets the first command and appends nothing', async () => {
    const first = await given(teltonika).when((store, clock) => requestCommand(store, clock, request));
    const stored = Object.entries(first.appended).flatMap(([stream, events]) => events.map((e) => ({ stream, e })));
    const history = { ...teltonika, ...Object.fromEntries(Object.entries(first.appended)) };
    const again = await given(history, { now: T0 + 23 * 3_600_000 }).when((store, clock) => requestCommand(store, clock, request));
    expect(stored.map((s) => s.e.type).sort()).toEqual(['CommandIdempotencyKeyUsed', 'DeviceCommandQueued']);
    expect(again.result).toEqual({ command_id: first.result!.command_id, position: null, replayed: true });
    expect(again.appended).toEqual({});
  });

  it('another request under the same key is refused with 422 idempotency_key_reused', async () => {
    const first = await given(teltonika).when((store, clock) => requestCommand(store, clock, request));
    const history = { ...teltonika, ...first.appended };
    const other = await given(history).when((store, clock) => requestCommand(store, clock, { ...request, params: { interval_s: 30 } }));
    expect(other.refused()).toMatchObject({ kind: 'unprocessable', code: 'idempotency_key_reused' });
    expect(other.appended).toEqual({});
  });

  it('after 24 h the key makes a new command', async () => {
    const first = await given(teltonika).when((store, clock) => requestCommand(store, clock, request));
    const later = await given({ ...teltonika, ...first.appended }, { now: T0 + 24 * 3_600_000 }).when((store, clock) => requestCommand(store, clock, request));
    expect(later.result!.command_id).not.toBe(first.result!.command_id);
    expect(later.appended[COMMANDS]).toHaveLength(1);
  });

  it('a key claimed by a request that died before queueing still yields its command, once', async () => {
    const first = await given(teltonika).when((store, clock) => requestCommand(store, clock, request));
    const claimOnly = Object.fromEntries(Object.entries(first.appended).filter(([stream]) => stream !== COMMANDS));
    const retry = await given({ ...teltonika, ...claimOnly }).when((store, clock) => requestCommand(store, clock, request));
    expect(retry.result).toMatchObject({ command_id: first.result!.command_id, replayed: true });
    expect(retry.appended[COMMANDS]).toEqual([first.appended[COMMANDS]![0]]);
  });
});

describe('cancel and expiry', () => {
  it('cancels a queued command', async () => {
    const then = await given(withHistory(queued())).when((store, clock) => cancelCommand(store, clock, { ...ref, customer_id: 'cus_a' }));
    expect(then.appended[COMMANDS]).toEqual([event('DeviceCommandCancelled', snapshot({ status: 'cancelled', completed_at: T0 }))]);
  });

  it('refuses to cancel a sent command with command_not_cancellable', async () => {
    const then = await given(withHistory(queued(), event('DeviceCommandSent', sentCommand, { attempt: 1 }))).when((store, clock) =>
      cancelCommand(store, clock, { ...ref, customer_id: 'cus_a' }),
    );
    expect(then.refused()).toMatchObject({ kind: 'conflict', code: 'command_not_cancellable' });
  });

  it("another customer's command is not found", async () => {
    const then = await given(withHistory(queued())).when((store, clock) => cancelCommand(store, clock, { ...ref, customer_id: 'cus_b' }));
    expect(then.refused()).toMatchObject({ kind: 'not_found' });
  });

  it('expires a queued command at its expiry, not a moment before', async () => {
    const early = await given(withHistory(queued({ expires_at: T0 + 1000 })), { now: T0 + 999 }).when((store, clock) => expireCommand(store, clock, ref));
    expect(early.appended).toEqual({});
    const due = await given(withHistory(queued({ expires_at: T0 + 1000 })), { now: T0 + 1000 }).when((store, clock) => expireCommand(store, clock, ref));
    expect(due.appended[COMMANDS]).toEqual([
      { ...event('DeviceCommandExpired', snapshot({ expires_at: T0 + 1000, status: 'expired', completed_at: T0 + 1000, error: 'expired' })), data: expect.objectContaining({ at: T0 + 1000 }) },
    ]);
  });

  it('never expires a command that was sent', async () => {
    const then = await given(withHistory(queued({ expires_at: T0 + 1000 }), event('DeviceCommandSent', sentCommand, { attempt: 1 })), { now: T0 + 5000 }).when((store, clock) =>
      expireCommand(store, clock, ref),
    );
    expect(then.appended).toEqual({});
  });
});

describe('the gateway side', () => {
  it('marks a queued command sent, attempt 1', async () => {
    const then = await given(withHistory(queued({ waiting_for: 'vehicle_stopped', type: 'engine_stop', expires_at: T0 + 300_000 })), { now: T0 + 1000 }).when((store, clock) =>
      markSent(store, clock, ref),
    );
    expect(then.result!.command).toMatchObject({ status: 'sent', waiting_for: null, sent_at: T0 + 1000, send_attempts: 1 });
    expect(then.appended[COMMANDS]![0]).toMatchObject({ type: 'DeviceCommandSent', data: { attempt: 1 } });
  });

  it('expires rather than sends a command past its expiry', async () => {
    const then = await given(withHistory(queued({ expires_at: T0 + 1000 })), { now: T0 + 2000 }).when((store, clock) => markSent(store, clock, ref));
    expect(then.result!.command.status).toBe('expired');
    expect(then.appended[COMMANDS]!.map((e) => e.type)).toEqual(['DeviceCommandExpired']);
  });

  it('resends a sent command whose outcome was lost once, and only once', async () => {
    const history = withHistory(queued(), event('DeviceCommandSent', sentCommand, { attempt: 1 }));
    const plain = await given(history).when((store, clock) => markSent(store, clock, ref));
    expect(plain.refused()).toMatchObject({ code: 'command_not_sendable' });
    const resend = await given(history).when((store, clock) => markSent(store, clock, { ...ref, resend: true }));
    expect(resend.appended[COMMANDS]![0]).toMatchObject({ type: 'DeviceCommandSent', data: { attempt: 2, command: { send_attempts: 2 } } });
    const twice = await given({ ...history, [COMMANDS]: [...history[COMMANDS]!, ...resend.appended[COMMANDS]!] }).when((store, clock) => markSent(store, clock, { ...ref, resend: true }));
    expect(twice.refused()).toMatchObject({ code: 'command_not_sendable' });
  });

  it('records an acknowledgement, then a success with the reply', async () => {
    const history = withHistory(queued(), event('DeviceCommandSent', sentCommand, { attempt: 1 }));
    const ack = await given(history, { now: T0 + 2000 }).when((store, clock) =>
      recordReply(store, clock, { ...ref, reply: { outcome: 'acknowledged', text: null, result_code: 0, raw_hex: '00' } }),
    );
    expect(ack.result!.command).toMatchObject({ status: 'acknowledged', acknowledged_at: T0 + 2000 });
    const done = await given({ ...history, [COMMANDS]: [...history[COMMANDS]!, ...ack.appended[COMMANDS]!] }, { now: T0 + 3000 }).when((store, clock) =>
      recordReply(store, clock, { ...ref, reply: { outcome: 'succeeded', text: 'DOUT1:1', result_code: null, raw_hex: '444f5554313a31' } }),
    );
    expect(done.appended[COMMANDS]).toEqual([
      event('DeviceCommandSucceeded', { ...ack.result!.command, status: 'succeeded', completed_at: T0 + 3000, response: { text: 'DOUT1:1', result_code: null, raw_hex: '444f5554313a31' } }),
    ].map((e) => ({ ...e, data: { ...e.data, at: T0 + 3000 } })));
  });

  it('an unsupported reply fails the command naming why; a late reply after that changes nothing', async () => {
    const history = withHistory(queued(), event('DeviceCommandSent', sentCommand, { attempt: 1 }));
    const failed = await given(history).when((store, clock) => recordReply(store, clock, { ...ref, reply: { outcome: 'unsupported', text: null, result_code: 3, raw_hex: '03' } }));
    expect(failed.result!.command).toMatchObject({ status: 'failed', error: 'unsupported', response: { result_code: 3 } });
    const late = await given({ ...history, [COMMANDS]: [...history[COMMANDS]!, ...failed.appended[COMMANDS]!] }).when((store, clock) =>
      recordReply(store, clock, { ...ref, reply: { outcome: 'succeeded', text: 'ok', result_code: 0, raw_hex: '00' } }),
    );
    expect(late.appended).toEqual({});
  });

  it('a sent command without a reply times out as failed with no_reply', async () => {
    const then = await given(withHistory(queued(), event('DeviceCommandSent', sentCommand, { attempt: 1 }))).when((store, clock) => markTimedOut(store, clock, ref));
    expect(then.result!.command).toMatchObject({ status: 'failed', error: 'no_reply' });
    const queuedOnly = await given(withHistory(queued())).when((store, clock) => markTimedOut(store, clock, ref));
    expect(queuedOnly.appended).toEqual({});
  });

  it('rejects a queued command the bound protocol cannot carry', async () => {
    const then = await given(withHistory(queued())).when((store, clock) => rejectCommand(store, clock, { ...ref, error: 'unsupported_by_protocol' }));
    expect(then.result!.command).toMatchObject({ status: 'rejected', error: 'unsupported_by_protocol' });
  });
});

describe('unfinishedCommands', () => {
  it('lists what the gateway still has work for in queue order, whatever the clocks said: queued, sent and acknowledged, not finished ones', async () => {
    const history = withHistory(
      queued({ command_id: 'cmd_3', created_at: T0 + 3 }),
      queued({ command_id: 'cmd_1', created_at: T0 + 1 }),
      event('DeviceCommandSent', snapshot({ command_id: 'cmd_1', created_at: T0 + 1, status: 'sent', send_attempts: 1 }), { attempt: 1 }),
      queued({ command_id: 'cmd_2', created_at: T0 + 2 }),
      event('DeviceCommandCancelled', snapshot({ command_id: 'cmd_2', created_at: T0 + 2, status: 'cancelled' })),
      queued({ command_id: 'cmd_4', created_at: T0 + 4 }),
      event('DeviceCommandAcknowledged', snapshot({ command_id: 'cmd_4', created_at: T0 + 4, status: 'acknowledged' })),
    );
    const then = await given(history).when((store) => unfinishedCommands(store, 'dev_1'));
    expect(then.result!.map((c) => [c.command_id, c.status])).toEqual([['cmd_3', 'queued'], ['cmd_1', 'sent'], ['cmd_4', 'acknowledged']]);
    expect(mayResend(then.result![1]!)).toBe(true);
  });
});

describe('dispatchDecision', () => {
  const moving: LatestFix = { speed_kmh: 60, ignition: true };
  const slow: LatestFix = { speed_kmh: 4.9, ignition: true };
  const atFive: LatestFix = { speed_kmh: 5, ignition: null };
  const ignitionOff: LatestFix = { speed_kmh: 30, ignition: false };
  const noSpeed: LatestFix = { speed_kmh: null, ignition: null };
  const stop = { type: 'engine_stop' as const, params: {}, expires_at: T0 + 300_000 };
  const stopNow = { ...stop, params: { when: 'now' } };
  const reboot = { type: 'reboot' as const, params: {}, expires_at: T0 + 300_000 };
  it.each([
    ['engine_stop, moving', stop, moving, T0, 'hold'],
    ['engine_stop, under 5 km/h', stop, slow, T0, 'send'],
    ['engine_stop, exactly 5 km/h', stop, atFive, T0, 'hold'],
    ['engine_stop, ignition off at speed', stop, ignitionOff, T0, 'send'],
    ['engine_stop, no speed reported', stop, noSpeed, T0, 'hold'],
    ['engine_stop, no fix at all', stop, null, T0, 'hold'],
    ['engine_stop when now, moving', stopNow, moving, T0, 'send'],
    ['engine_stop, stopped but expired', stop, slow, T0 + 300_000, 'expire'],
    ['engine_stop when now, expired', stopNow, moving, T0 + 300_001, 'expire'],
    ['engine_stop, moving and expired', stop, moving, T0 + 300_000, 'expire'],
    ['reboot, moving', reboot, moving, T0, 'send'],
    ['reboot, no fix', reboot, null, T0, 'send'],
    ['reboot, expired', reboot, null, T0 + 300_000, 'expire'],
  ] as const)('%s: %s', (_name, command, fix, now, expected) => {
    expect(dispatchDecision(command, fix, now)).toBe(expected);
  });
});

describe('engine command texts', () => {
  it('are the documented defaults per protocol, a device override first, none for JT/T 808', () => {
    expect(engineCommandText('teltonika', 'engine_stop', null)).toBe('setdigout 1');
    expect(engineCommandText('teltonika', 'engine_resume', null)).toBe('setdigout 0');
    expect(engineCommandText('gt06', 'engine_stop', null)).toBe('Relay,1#');
    expect(engineCommandText('gt06', 'engine_resume', {})).toBe('Relay,0#');
    expect(engineCommandText('gt06', 'engine_stop', { engine_stop: 'DYD,000000#' })).toBe('DYD,000000#');
    expect(engineCommandText('teltonika', 'engine_resume', { engine_stop: 'setdigout 11' })).toBe('setdigout 0');
    expect(engineCommandText('jt808', 'engine_stop', null)).toBeNull();
  });
});
