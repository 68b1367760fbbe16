/** What routes need from the rest of the system, injected by api/app.ts. */
import type { Clock } from '../core/clock.js';
import type { EventStore, LogPosition } from '../core/event-store/port.js';
import type { ReadModels } from './read-models.js';

export interface ApiContext {
  store: EventStore;
  clock: Clock;
  readModels: ReadModels;
  /** Resolves once the read models include the event at `position` (read-your-writes after a command). */
  waitFor(position: LogPosition): Promise<void>;
  catchUp(): Promise<void>;
}
