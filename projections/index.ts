/** Every read-model projection the API serves from, in the order the runner applies them. */
import { devicesProjection } from './devices/index.js';
import { historyProjection } from './history/index.js';
import { latestPositionsProjection } from './latest-positions/index.js';
import type { Projection } from './projection.js';
import { tenantsProjection } from './tenants/index.js';
import { unknownDevicesProjection } from './unknown-devices/index.js';

export const readModelProjections: Projection[] = [
  tenantsProjection,
  devicesProjection,
  latestPositionsProjection,
  historyProjection,
  unknownDevicesProjection,
];

export { ProjectionRunner, openReadModelDb } from './runner.js';
export type { DeviceRow, DeviceStatus } from './devices/evolve.js';
export type { LatestPositionRow } from './latest-positions/evolve.js';
