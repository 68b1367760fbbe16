/**
 * A projection runner in a worker thread of its own (webhook delivery, the position
 * history), and what its host and the thread say to each other: the host asks it to
 * catch up, to wait for a log position, and to stop; the thread answers each ask.
 */
import { parentPort, type Worker } from 'node:worker_threads';
import { systemClock } from './clock.js';
import { openEventStore } from './event-store/open.js';
import { positionFromString, positionToString, type EventStore, type LogPosition } from './event-store/port.js';

/** `id` pairs a request with its answer. */
export type ToRunnerThread = { type: 'catchUp'; id: number } | { type: 'waitFor'; id: number; position: string } | { type: 'stop' };

export type FromRunnerThread = { type: 'started' } | { type: 'answer'; id: number; error: string | null };

/** The host's side: asks, and the answers matched to them. Each role's host class extends it. */
export class RunnerThreadHost {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly worker: Worker,
    private readonly markStopping: () => void,
    private readonly roleName: string,
  ) {
    worker.on('message', (m: FromRunnerThread) => {
      if (m.type !== 'answer') return;
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error === null) w?.resolve();
      else w?.reject(new Error(m.error));
    });
  }

  private ask(request: { type: 'catchUp' } | { type: 'waitFor'; position: string }): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      const m: ToRunnerThread = { ...request, id };
      this.worker.postMessage(m);
    });
  }

  catchUp(): Promise<void> {
    return this.ask({ type: 'catchUp' });
  }

  waitFor(position: LogPosition): Promise<void> {
    return this.ask({ type: 'waitFor', position: positionToString(position) });
  }

  /** Lets the thread finish its work and commit, then ends it; `afterExit` runs once it has. */
  protected stopThread(afterExit: () => void = () => {}): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      this.markStopping();
      this.worker.once('exit', () => {
        afterExit();
        for (const w of this.waiting.values()) w.reject(new Error(`${this.roleName} stopped`));
        resolve();
      });
      const m: ToRunnerThread = { type: 'stop' };
      this.worker.postMessage(m);
    });
    return this.stopped;
  }
}

interface ThreadedRunner {
  catchUp(): Promise<void>;
  waitFor(position: LogPosition): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The thread's side: opens its own handle on the store, starts the role on it, says so,
 * then answers the host until it is told to stop (the role stops, then the store closes).
 * A failure to start reaches the host as the worker's error (the rejection, unhandled, ends
 * the thread with it). `storeUrl`: the configuration's `store`.
 */
export function runRunnerThread(storeUrl: string, start: (store: EventStore) => Promise<ThreadedRunner>): void {
  void (async () => {
    const opened = await openEventStore(storeUrl, systemClock);
    const runner = await start(opened);
    serve({
      catchUp: () => runner.catchUp(),
      waitFor: (p) => runner.waitFor(p),
      async stop() {
        await runner.stop();
        await opened.close();
      },
    });
  })();
}

function serve(runner: ThreadedRunner): void {
  const post = (m: FromRunnerThread) => parentPort!.postMessage(m);
  post({ type: 'started' });
  parentPort!.on('message', (m: ToRunnerThread) => {
    if (m.type === 'stop') {
      void runner.stop().then(() => parentPort!.close());
      return;
    }
    const work = m.type === 'catchUp' ? runner.catchUp() : runner.waitFor(positionFromString(m.position));
    work.then(
      () => post({ type: 'answer', id: m.id, error: null }),
      (err: unknown) => post({ type: 'answer', id: m.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}
