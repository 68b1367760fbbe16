/**
 * A queued command as the wire needs it: the domain's snapshot (type and checked params) plus
 * the device's engine texts, turned into the protocol-neutral `WireCommand` the encoders take.
 * Pure; the encoder decides what its protocol can carry.
 */
import { engineCommandText, type CommandTexts } from '../../core/command-types.js';
import type { DeviceProtocol } from '../../core/events.js';
import type { CommandSnapshot } from '../../core/events/commands.js';
import { CommandEncodeError, type WireCommand } from '../protocol.js';

export function wireCommandOf(command: Pick<CommandSnapshot, 'type' | 'params'>, protocol: DeviceProtocol, texts: CommandTexts | null): WireCommand {
  const { type, params } = command;
  switch (type) {
    case 'engine_stop':
    case 'engine_resume':
      // JT/T 808 has no text default: its encoder sends the binary vehicle control and ignores it.
      return { type, text: engineCommandText(protocol, type, texts) ?? '' };
    case 'reboot':
    case 'position_request':
      return { type };
    case 'set_report_interval':
      return { type, intervalS: Number(params.interval_s) };
    case 'text':
      return { type, message: String(params.message) };
    case 'custom':
      if (typeof params.hex === 'string') return { type, hex: params.hex };
      if (typeof params.text === 'string') return { type, text: params.text };
      throw new CommandEncodeError('invalid', 'custom command without text or hex');
  }
}
