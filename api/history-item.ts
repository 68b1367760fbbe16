/**
 * A position-history item's JSON, exactly as GET /v1/positions lists it: the
 * route's own response schema (HistoryPosition) serialised by
 * fast-json-stringify. The history projection stores it per fix
 * (projections/history), so a page is its rows' strings joined; the
 * composition root (main.ts) hands this encoder to the history's runner, or
 * names it to the history's thread (history-item-module.ts).
 */
import fastJson from 'fast-json-stringify';
import type { HistoryFix } from '../projections/index.js';
import { HistoryPosition, fixBody } from './schemas/positions.js';
import { sensorAttributes } from './sensor-attributes.js';

const serialize = fastJson(HistoryPosition);

export function historyItemJson(fix: HistoryFix): string {
  return serialize({
    device_id: fix.device_id,
    ...fixBody(fix),
    valid: fix.valid,
    odometer_km: fix.odometer_m === null ? null : fix.odometer_m / 1000,
    attributes: sensorAttributes(fix),
  });
}
