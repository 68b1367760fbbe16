/**
 * Engine stop/resume confirmed by the unit's own report of its output (the relay), for the
 * protocols that report one. Pure. A unit's text reply says it took the command; the next
 * status record says whether the relay moved.
 *
 * - Teltonika: IO 179, digital output 1, when the command sent was `setdigout <d…>` (the
 *   first digit is DOUT1's asked state); other texts drive outputs we cannot name.
 * - GT06: terminal-info bit 7, "oil and electricity disconnected".
 * - JT/T 808: status bit 10 (oil circuit cut) or 11 (electric circuit cut).
 */
import type { DeviceProtocol } from '../../core/events.js';
import type { DecodedRecord, WireCommand } from '../protocol.js';

const GT06_INFO_CUT = 1 << 7;
const JT808_STATUS_CUT = (1 << 10) | (1 << 11);
const SETDIGOUT = /^setdigout\s+([01])/i;

/** What the record says the relay is, in the terms of `expected` (true: cut); null when it says nothing. */
export type OutputCheck = (record: Pick<DecodedRecord, 'attributes'>) => boolean | null;

/** How to read the output an engine command asks for, or null when the protocol (or this text) reports none. */
export function outputCheckFor(protocol: DeviceProtocol, wire: WireCommand): { expected: boolean; read: OutputCheck } | null {
  if (wire.type !== 'engine_stop' && wire.type !== 'engine_resume') return null;
  const cut = wire.type === 'engine_stop';
  switch (protocol) {
    case 'teltonika': {
      const digit = SETDIGOUT.exec(wire.text)?.[1];
      if (digit === undefined) return null;
      return { expected: digit === '1', read: (r) => numberOr(r.attributes.io179, (v) => v === 1) };
    }
    case 'gt06':
      return { expected: cut, read: (r) => numberOr(r.attributes.terminal_info, (v) => (v & GT06_INFO_CUT) !== 0) };
    case 'jt808':
      return { expected: cut, read: (r) => numberOr(r.attributes.status_flags, (v) => (v & JT808_STATUS_CUT) !== 0) };
  }
}

function numberOr(value: unknown, test: (v: number) => boolean): boolean | null {
  return typeof value === 'number' ? test(value) : null;
}
