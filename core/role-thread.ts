/**
 * A role of the platform in a worker thread of its own (the gateway, webhook delivery, the
 * position history, and under `fleet start` the platform's own thread, main.ts):
 * started with the configuration, answered for once it says `started`, and watched for
 * a failure after that (the process should stop: the role no longer serves).
 */
import { Worker } from 'node:worker_threads';

/** The entry module `file` beside `from`; from TypeScript sources (vitest), its compiled copy under dist/. */
export function threadEntry(from: string, file: string): URL {
  if (!from.endsWith('.ts')) return new URL(`./${file}.js`, from);
  const root = new URL('../', import.meta.url);
  const folder = new URL('./', from).href.slice(root.href.length);
  return new URL(`dist/${folder}${file}.js`, root);
}

export interface StartedThread<M> {
  worker: Worker;
  /** The thread's `started` message. */
  started: M;
  /** Marks a stop the host asked for: the thread's exit after it is no failure. */
  stopping(): void;
}

/**
 * Room for short-lived objects in a role thread (frames, payloads, requests all die young). With
 * V8's default a busy thread scavenges several times a second and promotes what is merely in
 * flight; with this, the webhook bench's platform used about a sixth less CPU at half the plan
 * limits. It is a ceiling: a quiet thread uses little of it.
 */
const ROLE_THREAD_YOUNG_GENERATION_MB = 96;

export function startRoleThread<M extends { type: string }>(
  entry: URL,
  workerData: unknown,
  onFailure: (err: Error) => void,
): Promise<StartedThread<M>> {
  const worker = new Worker(entry, { workerData, resourceLimits: { maxYoungGenerationSizeMb: ROLE_THREAD_YOUNG_GENERATION_MB } });
  let started = false;
  let stopping = false;
  return new Promise((resolve, reject) => {
    worker.on('message', (m: M) => {
      if (m.type !== 'started' || started) return;
      started = true;
      resolve({ worker, started: m, stopping: () => (stopping = true) });
    });
    worker.on('error', (err) => (started ? onFailure(err) : reject(err)));
    worker.on('exit', (code) => {
      if (!started) reject(new Error(`a role thread (${entry.pathname}) exited with code ${code} before it started`));
      else if (!stopping) onFailure(new Error(`a role thread (${entry.pathname}) exited with code ${code}`));
    });
  });
}
