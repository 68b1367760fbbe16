/** Placeholder: filled in by its owner. */
import type { Projection } from '../projection.js';

export const driverScoresProjection: Projection = {
  name: 'driver-scores',
  migrate() {},
  prepare() {
    return () => {};
  },
};
