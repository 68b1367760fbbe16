import { Type, type Static } from '@sinclair/typebox';
import type { DeviceWithPosition } from '../queries/devices.js';
import { MAX_COMMAND_TEXT_LENGTH, type CommandTexts as CommandTextFields } from '../../core/command-types.js';
import { Limit, Nullable, Pagination, Timestamp, iso } from './common.js';
import { DevicePosition, fixBody } from './positions.js';

const Protocol = Type.Union([Type.Literal('teltonika'), Type.Literal('gt06'), Type.Literal('jt808')]);

export const DeviceStatus = Type.Union([Type.Literal('never_connected'), Type.Literal('online'), Type.Literal('offline')]);


const CommandText = Type.String({ minLength: 1, maxLength: MAX_COMMAND_TEXT_LENGTH });
/** A device's own engine texts; absent ones are its protocol's defaults (docs/commands.md). */
const CommandTexts = Type.Object(
  { engine_stop: Type.Optional(CommandText), engine_resume: Type.Optional(CommandText) },
  { additionalProperties: false, description: 'Texts engine_stop/engine_resume send instead of the protocol defaults (Teltonika `setdigout 1`/`setdigout 0`, GT06 `Relay,1#`/`Relay,0#`)' },
);

export const Device = Type.Object({
  id: Type.String(),
  imei: Type.String(),
  model: Type.String(),
  name: Nullable(Type.String()),
  group_id: Nullable(Type.String()),
  driver_id: Nullable(Type.String()),
  terminal_id: Nullable(Type.String()),
  speed_limit_kmh: Nullable(Type.Number({ description: "overspeed threshold of this device; null: the customer's default applies" })),
  command_texts: Nullable(CommandTexts),
  status: DeviceStatus,
  last_seen_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  latest_position: Nullable(DevicePosition),
  driver: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
});

/** Overspeed threshold for one device (null: the customer's default). */
const SpeedLimit = Nullable(Type.Number({ minimum: 1, maximum: 300, description: 'km/h; null falls back to the customer default' }));

export const RegisterDeviceBody = Type.Object(
  {
    imei: Type.String({ pattern: '^[0-9]{15}$', description: '15 digits with a valid Luhn check digit' }),
    model: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128 }))),
    group_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    driver_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    terminal_id: Type.Optional(
      Nullable(Type.String({ pattern: '^[0-9]{1,20}$', description: 'JT/T 808 terminal phone number' })),
    ),
    speed_limit_kmh: Type.Optional(SpeedLimit),
    protocol: Type.Optional(
      Type.Union([Protocol, Type.Null()], { description: 'The only protocol the unit may log in with; absent: the one it first connects with (then fixed)' }),
    ),
  },
  { additionalProperties: false },
);
export type RegisterDeviceBody = Static<typeof RegisterDeviceBody>;

/** Merge-patch of the editable fields: absent keeps, null clears. */
export const UpdateDeviceBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128 }))),
    group_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    driver_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    speed_limit_kmh: Type.Optional(SpeedLimit),
    command_texts: Type.Optional(Nullable(CommandTexts)),
  },
  { additionalProperties: false },
);
export type UpdateDeviceBody = Static<typeof UpdateDeviceBody>;

export const ListDevicesQuery = Type.Object(
  {
    limit: Limit(200),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    group_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(
      Type.String({ pattern: '^(never_connected|online|offline)(,(never_connected|online|offline))*$' }),
    ),
  },
  { additionalProperties: false },
);
export type ListDevicesQuery = Static<typeof ListDevicesQuery>;

export const DeviceList = Type.Object({ data: Type.Array(Device), pagination: Pagination });

export function deviceBody(d: DeviceWithPosition): Static<typeof Device> {
  return {
    id: d.device_id,
    imei: d.imei,
    model: d.model,
    name: d.name,
    group_id: d.group_id,
    driver_id: d.driver_id,
    terminal_id: d.terminal_id,
    speed_limit_kmh: d.speed_limit_kmh,
    command_texts: d.command_texts ? (JSON.parse(d.command_texts) as CommandTextFields) : null,
    status: d.status,
    last_seen_at: iso(d.last_seen_at),
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    latest_position: d.position ? fixBody(d.position) : null,
    driver: d.driver_id && d.driver_name ? { id: d.driver_id, name: d.driver_name } : null,
  };
}
