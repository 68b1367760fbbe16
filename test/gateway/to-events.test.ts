/**
 * Decoded records into domain events: a status record that carries an alarm keeps its
 * ignition as a StatusReported beside the AlarmReported (a GT06 heartbeat with the SOS code
 * and the ACC bit), and a plain heartbeat is a StatusReported alone.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceClaim } from '../../core/events.js';
import { gt06 } from '../../gateway/protocols/gt06/index.js';
import { recordsToEvents } from '../../gateway/to-events.js';
import { gt06Heartbeat } from '../support/gt06-frames.js';

const DEVICE: DeviceClaim = { device_id: 'dev_1', customer_id: 'cus_1', imei: '356938035643809', model: 'GT06N', terminal_id: null, claimed_at: 0 };
const NOW = Date.UTC(2026, 11, 3, 8);
const eventsOf = (terminalInfo: number) => {
  const decoded = gt06.decode(gt06Heartbeat(terminalInfo, 7), { imei: DEVICE.imei, model: DEVICE.model, timezoneMinutes: null, frameIndex: 1, now: NOW });
  return recordsToEvents(decoded.records, DEVICE, 'gt06', NOW);
};

describe('recordsToEvents', () => {
  it('keeps the ignition of a heartbeat that raises an alarm', () => {
    const events = eventsOf(0x20 | 0x02); // alarm code 4 (SOS) in bits 3-5, ACC on in bit 1
    expect(events.map((e) => e.type)).toEqual(['StatusReported', 'AlarmReported']);
    expect(events[0]!.data).toMatchObject({ ignition: true, at: NOW });
    expect(events[1]!.data).toMatchObject({ kind: 'event.sos', position: null });
  });

  it('turns a plain heartbeat into one StatusReported', () => {
    const events = eventsOf(0x00);
    expect(events.map((e) => e.type)).toEqual(['StatusReported']);
    expect(events[0]!.data).toMatchObject({ ignition: false });
  });
});
