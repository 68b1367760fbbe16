/** Placeholder: filled in by its owner. */
import type { Projection } from '../projection.js';

export const geofencesProjection: Projection = {
  name: 'geofences',
  migrate() {},
  prepare() {
    return () => {};
  },
};
