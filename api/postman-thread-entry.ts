/** Converts the OpenAPI document into the Postman collection off the API's thread (api/routes/postman.ts): it takes a CPU for a moment. */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThisThread } from '../core/thread-name.js';
import { postmanCollection } from './postman.js';

nameThisThread('postman');
postmanCollection(workerData as Parameters<typeof postmanCollection>[0]).then(
  (collection) => parentPort!.postMessage({ json: JSON.stringify(collection) }),
  (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) }),
);
