/**
 * The catalogue of device commands: which types each protocol carries, the
 * params of each with their limits, time-to-live rules, and the texts an
 * engine stop or resume sends where the protocol carries it as text
 * (Teltonika, GT06), with each device's overrides. Pure: the commands
 * validate with it and the API lists it (GET /v1/devices/{id}/command-types).
 */
import type { DeviceProtocol } from './events.js';
import { CommandRejected } from './commands/rejection.js';

export const COMMAND_TYPES = ['engine_stop', 'engine_resume', 'reboot', 'position_request', 'set_report_interval', 'text', 'custom'] as const;
export type CommandTypeName = (typeof COMMAND_TYPES)[number];

export const COMMAND_STATUSES = ['queued', 'sent', 'acknowledged', 'succeeded', 'failed', 'expired', 'cancelled', 'rejected'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

/** Which types each protocol's encoder writes (JT/T 808 alone has a driver display for `text`). */
export const PROTOCOL_COMMAND_TYPES: Readonly<Record<DeviceProtocol, readonly CommandTypeName[]>> = {
  teltonika: ['engine_stop', 'engine_resume', 'reboot', 'position_request', 'set_report_interval', 'custom'],
  gt06: ['engine_stop', 'engine_resume', 'reboot', 'position_request', 'set_report_interval', 'custom'],
  jt808: [...COMMAND_TYPES],
};

/** One param of a type, as GET .../command-types lists it. */
export interface ParamSpec {
  name: string;
  kind: 'integer' | 'string' | 'hex' | 'enum';
  required: boolean;
  minimum?: number;
  maximum?: number;
  min_length?: number;
  max_length?: number;
  values?: string[];
  /** Params of the same group exclude each other; exactly one of them is given (`custom`: text or hex). */
  one_of?: string;
  description: string;
}

export interface CommandTypeSpec {
  type: CommandTypeName;
  description: string;
  params: ParamSpec[];
  /** Default time to live when the request gives none. */
  default_ttl_s: number;
}

export const ENGINE_TTL_S = 300;
export const OTHER_TTL_S = 86_400;
export const MAX_TTL_S = 7 * 86_400;
/** Under this speed (or with ignition off) a vehicle counts as stopped for an engine stop. */
export const STOPPED_BELOW_KMH = 5;
export const MAX_CUSTOM_HEX_BYTES = 1024;

export const COMMAND_TYPE_SPECS: Readonly<Record<CommandTypeName, CommandTypeSpec>> = {
  engine_stop: {
    type: 'engine_stop',
    description: 'Cut the engine (output relay on). Held until the vehicle is stopped (speed under 5 km/h or ignition off) unless `when` is `now`.',
    params: [{ name: 'when', kind: 'enum', required: false, values: ['now'], description: '`now`: send without waiting for the vehicle to stop' }],
    default_ttl_s: ENGINE_TTL_S,
  },
  engine_resume: { type: 'engine_resume', description: 'Allow the engine again (output relay off).', params: [], default_ttl_s: ENGINE_TTL_S },
  reboot: { type: 'reboot', description: 'Restart the unit.', params: [], default_ttl_s: OTHER_TTL_S },
  position_request: { type: 'position_request', description: 'Ask the unit for its position now.', params: [], default_ttl_s: OTHER_TTL_S },
  set_report_interval: {
    type: 'set_report_interval',
    description: 'Change how often the unit reports.',
    params: [{ name: 'interval_s', kind: 'integer', required: true, minimum: 5, maximum: 86_400, description: 'Seconds between reports' }],
    default_ttl_s: OTHER_TTL_S,
  },
  text: {
    type: 'text',
    description: "Show a message on the driver's display.",
    params: [{ name: 'message', kind: 'string', required: true, min_length: 1, max_length: 255, description: 'The text shown' }],
    default_ttl_s: OTHER_TTL_S,
  },
  custom: {
    type: 'custom',
    description: 'A raw protocol payload, for integrators who know their units: `text` (a text command) or `hex` (bytes).',
    params: [
      { name: 'text', kind: 'string', required: false, min_length: 1, max_length: 512, one_of: 'payload', description: 'A text command as the unit takes it' },
      { name: 'hex', kind: 'hex', required: false, min_length: 2, max_length: 2 * MAX_CUSTOM_HEX_BYTES, one_of: 'payload', description: 'Bytes in hex, an even number of digits, at most 1024 bytes' },
    ],
    default_ttl_s: OTHER_TTL_S,
  },
};

/** The types a device may be sent: its protocol's, or every type while the protocol is not known yet (the gateway rejects what the bound one lacks). */
export function commandTypesFor(protocol: DeviceProtocol | null): readonly CommandTypeName[] {
  return protocol ? PROTOCOL_COMMAND_TYPES[protocol] : COMMAND_TYPES;
}

export function isCommandType(text: string): text is CommandTypeName {
  return (COMMAND_TYPES as readonly string[]).includes(text);
}

const invalid = (detail: string, field: string) => new CommandRejected('invalid', 'validation_failed', detail, field);
const HEX = /^[0-9a-fA-F]*$/;

function checkParam(spec: ParamSpec, value: unknown): string | number {
  const at = `/params/${spec.name}`;
  switch (spec.kind) {
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(`${spec.name} must be an integer.`, at);
      if (value < spec.minimum! || value > spec.maximum!) throw invalid(`${spec.name} must be between ${spec.minimum} and ${spec.maximum}.`, at);
      return value;
    case 'enum':
      if (typeof value !== 'string' || !spec.values!.includes(value)) throw invalid(`${spec.name} must be one of ${spec.values!.join(', ')}.`, at);
      return value;
    case 'string':
    case 'hex': {
      if (typeof value !== 'string') throw invalid(`${spec.name} must be a string.`, at);
      const length = [...value].length;
      if (length < spec.min_length! || length > spec.max_length!) {
        throw invalid(`${spec.name} must be ${spec.min_length} to ${spec.max_length} characters long.`, at);
      }
      if (spec.kind === 'hex' && (!HEX.test(value) || value.length % 2 !== 0)) throw invalid(`${spec.name} must be hex digits, an even number of them.`, at);
      return spec.kind === 'hex' ? value.toLowerCase() : value;
    }
  }
}

/**
 * The params of a command of `type`, checked against its spec: unknown names,
 * missing required ones and values out of range are refused naming the field.
 */
export function checkCommandParams(type: CommandTypeName, params: Readonly<Record<string, unknown>>): Record<string, string | number> {
  const specs = COMMAND_TYPE_SPECS[type].params;
  for (const name of Object.keys(params)) {
    if (!specs.some((s) => s.name === name)) throw invalid(`${type} takes no param ${name}.`, `/params/${name}`);
  }
  const out: Record<string, string | number> = {};
  for (const spec of specs) {
    const value = params[spec.name];
    if (value === undefined) {
      if (spec.required) throw invalid(`${type} needs the param ${spec.name}.`, `/params/${spec.name}`);
      continue;
    }
    out[spec.name] = checkParam(spec, value);
  }
  const groups = new Set(specs.flatMap((s) => (s.one_of ? [s.one_of] : [])));
  for (const group of groups) {
    const names = specs.filter((s) => s.one_of === group).map((s) => s.name);
    if (names.filter((n) => n in out).length !== 1) throw invalid(`${type} takes exactly one of ${names.join(', ')}.`, '/params');
  }
  return out;
}

/** The time to live asked for, or the type's default; longer than 7 days is refused. */
export function commandTtlS(type: CommandTypeName, ttlS: number | undefined): number {
  if (ttlS === undefined) return COMMAND_TYPE_SPECS[type].default_ttl_s;
  if (!Number.isInteger(ttlS) || ttlS < 1 || ttlS > MAX_TTL_S) throw invalid(`ttl_s must be a whole number of seconds from 1 to ${MAX_TTL_S} (7 days).`, '/ttl_s');
  return ttlS;
}

/** A device's own engine texts (PATCH /v1/devices/{id} `command_texts`); absent ones take the protocol's default. */
export interface CommandTexts {
  engine_stop?: string;
  engine_resume?: string;
}

export const MAX_COMMAND_TEXT_LENGTH = 128;

/**
 * Documented defaults: Teltonika FMB units cut the engine through digital output 1, GT06 units
 * through their relay command. JT/T 808 sends its binary vehicle control (0x8105) and needs no text.
 */
export const DEFAULT_ENGINE_TEXTS: Readonly<Record<DeviceProtocol, Required<CommandTexts> | null>> = {
  teltonika: { engine_stop: 'setdigout 1', engine_resume: 'setdigout 0' },
  gt06: { engine_stop: 'Relay,1#', engine_resume: 'Relay,0#' },
  jt808: null,
};

/** The text an engine stop or resume sends to this device: its override, else its protocol's default (null: the protocol sends no text). */
export function engineCommandText(protocol: DeviceProtocol, type: 'engine_stop' | 'engine_resume', overrides: CommandTexts | null): string | null {
  return overrides?.[type] ?? DEFAULT_ENGINE_TEXTS[protocol]?.[type] ?? null;
}
