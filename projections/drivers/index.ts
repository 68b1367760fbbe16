/** Placeholder: filled in by its owner. */
import type { Projection } from '../projection.js';

export const driversProjection: Projection = {
  name: 'drivers',
  migrate() {},
  prepare() {
    return () => {};
  },
};
