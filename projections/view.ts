/**
 * The runners as readers outside projections/ see them: where the read models
 * are, a feed of their committed batches, and how far behind the log the
 * furthest behind of them (the history's runner included) is. Structural, so
 * the API can declare the shape it needs without importing the runner.
 */
import type { Clock } from '../core/clock.js';
import { comparePositions, type EventStore, type LogPosition } from '../core/event-store/port.js';
import { measureLag } from './lag.js';
import type { ProjectionRunner } from './runner.js';

export function runnerView(runner: ProjectionRunner, history: { position(): LogPosition | null }, store: EventStore, clock: Clock) {
  return {
    position: () => runner.position,
    onApplied: runner.onApplied.bind(runner),
    lag: () => measureLag(store, earliest(runner.position, history.position()), clock),
  };
}

/** null (nothing applied) is the earliest of all. */
function earliest(a: LogPosition | null, b: LogPosition | null): LogPosition | null {
  if (a === null || b === null) return null;
  return comparePositions(a, b) <= 0 ? a : b;
}
