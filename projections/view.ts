/**
 * The runner as readers outside projections/ see it: where it is, a feed of
 * committed batches, and how far behind the log it is. Structural, so the
 * API can declare the shape it needs without importing the runner.
 */
import type { Clock } from '../core/clock.js';
import type { EventStore } from '../core/event-store/port.js';
import { measureLag } from './lag.js';
import type { ProjectionRunner } from './runner.js';

export function runnerView(runner: ProjectionRunner, store: EventStore, clock: Clock) {
  return {
    position: () => runner.position,
    onApplied: runner.onApplied.bind(runner),
    lag: () => measureLag(store, runner.position, clock),
  };
}
