/** The events list as CSV: one line per event, its kind's fields as one JSON column (they differ by kind). */
import type { EventRow } from '../queries/events.js';
import { iso } from '../schemas/common.js';
import type { CsvValue } from './formats.js';

type Position = { lat: number; lng: number; speed_kmh: number | null } | null;
const positionOf = (e: EventRow): Position => (e.position ? (JSON.parse(e.position) as Position) : null);

export const EVENT_COLUMNS: Array<[string, (e: EventRow) => CsvValue]> = [
  ['id', (e) => e.event_id],
  ['kind', (e) => e.kind],
  ['severity', (e) => e.severity],
  ['occurred_at', (e) => iso(e.occurred_at)],
  ['device_id', (e) => e.device_id],
  ['device_name', (e) => e.device_name],
  ['driver_id', (e) => e.driver_id],
  ['source', (e) => e.source],
  ['lat', (e) => positionOf(e)?.lat],
  ['lng', (e) => positionOf(e)?.lng],
  ['speed_kmh', (e) => positionOf(e)?.speed_kmh],
  ['fields', (e) => e.fields],
];
