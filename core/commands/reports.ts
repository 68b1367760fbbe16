/**
 * Report commands: a customer's trip rules (on its tenant stream) and a
 * device's odometer and engine hours set to its dashboard (on the device
 * stream, where another tenant's device is not found).
 */
import type { Clock } from '../clock.js';
import type { EventStore, LogPosition } from '../event-store/port.js';
import { streams } from '../streams.js';
import { tripRulesProblem, type TripRules } from '../trip-rules.js';
import { checkDevice, deviceStream, type DeviceState } from './devices.js';
import { type NewEvent, handle } from './handler.js';
import { CommandRejected } from './rejection.js';
import { checkCustomer, tenantStream, type TenantState } from './tenant.js';

/** The whole set of rules, refused when one leaves its bounds. */
export function decideSetTripRules(state: TenantState, command: { customer_id: string; rules: TripRules }, now: number): NewEvent[] {
  checkCustomer(state, command.customer_id);
  const problem = tripRulesProblem(command.rules);
  if (problem) throw new CommandRejected('invalid', 'validation_failed', `${problem[0]} ${problem[1]}`, `/${problem[0]}`);
  return [{ type: 'TripRulesSet', data: { customer_id: command.customer_id, rules: { ...command.rules }, set_at: now } }];
}

export async function setTripRules(store: EventStore, clock: Clock, input: { customer_id: string; rules: TripRules }): Promise<LogPosition> {
  const now = clock.now();
  const { position } = await handle(store, {
    stream: streams.tenant(input.customer_id),
    aggregate: tenantStream,
    decide: (state) => decideSetTripRules(state, input, now),
  });
  return position!;
}


export interface SetAccumulatorsInput {
  customer_id: string;
  device_id: string;
  odometer_km?: number | null;
  engine_hours?: number | null;
}

export function decideSetAccumulators(state: DeviceState, command: SetAccumulatorsInput, now: number): NewEvent[] {
  checkDevice(state, command.customer_id, command.device_id);
  const odometer = command.odometer_km ?? null;
  const hours = command.engine_hours ?? null;
  if (odometer === null && hours === null) {
    throw new CommandRejected('invalid', 'validation_failed', 'Give odometer_km, engine_hours or both.', '/odometer_km');
  }
  return [
    {
      type: 'AccumulatorsSet',
      data: { customer_id: command.customer_id, device_id: command.device_id, odometer_km: odometer, engine_hours: hours, set_at: now },
    },
  ];
}

export async function setAccumulators(store: EventStore, clock: Clock, input: SetAccumulatorsInput): Promise<LogPosition> {
  const now = clock.now();
  const { position } = await handle(store, {
    stream: streams.device(input.device_id),
    aggregate: deviceStream,
    decide: (state) => decideSetAccumulators(state, input, now),
  });
  return position!;
}
