/**
 * A fix's decoded sensor values as the API shows them (history, stream):
 * the common ones under names of their own, whatever the protocol, and the
 * rest as the decoder named them (docs/trips.md, "Sensor attributes").
 * Teltonika IO elements are listed by id under `io` as well; ids are
 * model-specific, so only the common FMB/FMC ones are named.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { PositionRecorded } from '../core/events.js';

const Value = Type.Union([Type.Number(), Type.String(), Type.Boolean()]);

export const SensorAttributes = Type.Object(
  {
    ignition: Type.Optional(Type.Boolean()),
    movement: Type.Optional(Type.Boolean({ description: 'Teltonika IO 240' })),
    odometer_km: Type.Optional(Type.Number({ description: "The unit's own counter" })),
    fuel_level_pct: Type.Optional(Type.Number({ description: 'Teltonika IO 89' })),
    fuel_l: Type.Optional(Type.Number({ description: 'JT/T 808 item 0x02' })),
    external_voltage_v: Type.Optional(Type.Number({ description: 'Teltonika IO 66' })),
    battery_voltage_v: Type.Optional(Type.Number({ description: 'Teltonika IO 67' })),
    battery_level_pct: Type.Optional(Type.Number({ description: 'Teltonika IO 113, GT06 voltage level' })),
    gsm_signal: Type.Optional(Type.Number({ description: 'Teltonika IO 21, GT06 GSM level' })),
    io: Type.Optional(Type.Record(Type.String({ pattern: '^[0-9]+$' }), Value, { description: 'Teltonika: every IO element by its id' })),
  },
  { additionalProperties: Value, description: 'Decoded sensor values; names beyond these are the decoder\'s (gateway/protocols/*/README.md)' },
);
export type SensorAttributes = Static<typeof SensorAttributes>;

const IO_KEY = /^io(\d+)$/;
/** Teltonika ids with a name of their own, and how their raw value reads in it. */
const NAMED_IO: Record<string, [keyof SensorAttributes, (v: number) => number | boolean]> = {
  '240': ['movement', (v) => v !== 0],
  '89': ['fuel_level_pct', (v) => v],
  '66': ['external_voltage_v', (v) => v / 1000],
  '67': ['battery_voltage_v', (v) => v / 1000],
  '113': ['battery_level_pct', (v) => v],
  '21': ['gsm_signal', (v) => v],
};
/** Other protocols' decoder names for the same values. */
const RENAMED: Record<string, keyof SensorAttributes> = { battery_level: 'battery_level_pct', gsm_level: 'gsm_signal' };

type Fix = Pick<PositionRecorded['data'], 'ignition' | 'odometer_m' | 'attributes'>;

export function sensorAttributes(fix: Fix): SensorAttributes {
  const out: Record<string, unknown> = {};
  let io: Record<string, number | string | boolean> | null = null;
  for (const [key, value] of Object.entries(fix.attributes)) {
    const id = IO_KEY.exec(key)?.[1];
    if (id === undefined) {
      out[RENAMED[key] ?? key] = value;
      continue;
    }
    (io ??= {})[id] = value;
    const named = NAMED_IO[id];
    if (named && typeof value === 'number') out[named[0]] = named[1](value);
  }
  if (fix.ignition !== null) out.ignition = fix.ignition;
  if (fix.odometer_m !== null) out.odometer_km = fix.odometer_m / 1000;
  if (io) out.io = io;
  return out as SensorAttributes;
}
