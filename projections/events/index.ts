/** Placeholder: filled in by its owner. */
import type { Projection } from '../projection.js';

export const eventsProjection: Projection = {
  name: 'events',
  migrate() {},
  prepare() {
    return () => {};
  },
};
