/** Every read-model projection the API serves from, in the order the runner applies them. */
import { commandsProjection } from './commands/index.js';
import { devicesProjection } from './devices/index.js';
import { driverScoresProjection } from './driver-scores/index.js';
import { driversProjection } from './drivers/index.js';
import { eventsProjection } from './events/index.js';
import { streamFeedProjection } from './stream-feed/index.js';
import { geofencesProjection } from './geofences/index.js';
import { safetyEventsProjection } from './safety-events/index.js';
import { latestPositionsProjection } from './latest-positions/index.js';
import type { Projection } from './projection.js';
import { tenantsProjection } from './tenants/index.js';
import { tripsProjection } from './trips/index.js';
import { unknownDevicesProjection } from './unknown-devices/index.js';
import { usersProjection } from './users/index.js';
import { webhookEndpointsProjection } from './webhook-endpoints/index.js';

/**
 * Every read model but the position history, which has a database and a runner of its
 * own (history/database.ts).
 */
export function readModelProjections(): Projection[] {
  return [
    tenantsProjection,
    usersProjection,
    devicesProjection,
    latestPositionsProjection,
    unknownDevicesProjection,
    driversProjection,
    webhookEndpointsProjection,
    commandsProjection,
    // Detectors: they derive DeviceEventRaised events (through the runner's outbox).
    safetyEventsProjection,
    geofencesProjection,
    // Read models of derived events; trips also reads the geofences table, kept by the projection above.
    eventsProjection,
    driverScoresProjection,
    tripsProjection,
    streamFeedProjection,
  ];
}

export { ProjectionRunner, openReadModelDb, readModelsDbPath } from './runner.js';
export { historyProjection, type HistoryFix, type HistoryItemEncoder } from './history/index.js';
export { dropHistoryFromReadModels, historyDbPath, openHistoryDb, openHistoryReads, startHistory, type HistoryReads, type HistoryRole } from './history/database.js';
export { evolveDevice, type DeviceRow, type DeviceStatus } from './devices/evolve.js';
export type { CommandRow } from './commands/index.js';
export { evolveLatestPosition, type LatestPositionRow } from './latest-positions/evolve.js';
