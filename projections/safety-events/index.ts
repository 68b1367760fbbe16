/** Placeholder: filled in by its owner. */
import type { Projection } from '../projection.js';

export const safetyEventsProjection: Projection = {
  name: 'safety-events',
  migrate() {},
  prepare() {
    return () => {};
  },
};
