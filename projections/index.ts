/** Every read-model projection the API serves from, in the order the runner applies them. */
import { devicesProjection } from './devices/index.js';
import { driverScoresProjection } from './driver-scores/index.js';
import { driversProjection } from './drivers/index.js';
import { eventsProjection } from './events/index.js';
import { geofencesProjection } from './geofences/index.js';
import { safetyEventsProjection } from './safety-events/index.js';
import { historyProjection, type HistoryItemEncoder } from './history/index.js';
import { latestPositionsProjection } from './latest-positions/index.js';
import type { Projection } from './projection.js';
import { tenantsProjection } from './tenants/index.js';
import { unknownDevicesProjection } from './unknown-devices/index.js';
import { usersProjection } from './users/index.js';
import { webhookEndpointsProjection } from './webhook-endpoints/index.js';

/**
 * `historyItem`: the API's JSON of a history item, which the history stores per fix
 * (api/history-item.ts; the composition root passes it in, as projections/ never imports api/).
 */
export function readModelProjections(historyItem: HistoryItemEncoder): Projection[] {
  return [
    tenantsProjection,
    usersProjection,
    devicesProjection,
    latestPositionsProjection,
    historyProjection(historyItem),
    unknownDevicesProjection,
    driversProjection,
    webhookEndpointsProjection,
    // Detectors: they derive DeviceEventRaised events (through the runner's outbox).
    safetyEventsProjection,
    geofencesProjection,
    // Read models of derived events.
    eventsProjection,
    driverScoresProjection,
  ];
}

export { ProjectionRunner, openReadModelDb } from './runner.js';
export type { HistoryFix, HistoryItemEncoder } from './history/index.js';
export { evolveDevice, type DeviceRow, type DeviceStatus } from './devices/evolve.js';
export { evolveLatestPosition, type LatestPositionRow } from './latest-positions/evolve.js';
