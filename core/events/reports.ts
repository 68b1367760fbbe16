/** Events of the trip reports and accumulators (part of the DomainEvent union in core/events.ts). */
import type { TripRules } from '../trip-rules.js';

/**
 * A customer's trip, stop and idle rules (stream `tenant-{customer}`), whole:
 * trips the read model works out after it use them; earlier ones stay as cut.
 */
export interface TripRulesSet {
  type: 'TripRulesSet';
  data: { customer_id: string; rules: TripRules; set_at: number };
}

/**
 * A device's odometer or engine hours set to what its dashboard shows (stream
 * `device-{device}`). The read model keeps the difference to what it had
 * computed when it applies this event, and adds it from then on; null leaves
 * that accumulator as it is.
 */
export interface AccumulatorsSet {
  type: 'AccumulatorsSet';
  data: { customer_id: string; device_id: string; odometer_km: number | null; engine_hours: number | null; set_at: number };
}
