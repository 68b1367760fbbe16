/**
 * GET /v1/postman.json: the OpenAPI document as a Postman collection, public
 * like the document itself. It is converted once, when first asked for, in a
 * thread of its own (the conversion would hold the API's event loop), and
 * kept; a failed conversion is tried again by the next request.
 */
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import { threadEntry } from '../../core/role-thread.js';
import { sendSerialized } from '../send-serialized.js';

function convertInThread(doc: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(threadEntry(import.meta.url, '../postman-thread-entry'), { workerData: doc });
    worker.once('message', (m: { json?: string; error?: string }) => {
      if (m.json !== undefined) resolve(m.json);
      else reject(new Error(m.error));
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the Postman conversion thread exited with code ${code}`)));
  });
}

export async function postmanRoutes(app: FastifyInstance): Promise<void> {
  let collection: Promise<string> | null = null;
  app.get(
    '/v1/postman.json',
    {
      schema: {
        tags: ['Operations'],
        summary: 'This API as a Postman collection (v2.1)',
        description: 'Generated from the OpenAPI document. Set the collection variables `baseUrl` and `bearerToken` (an API key or an OAuth access token) after importing.',
        operationId: 'getPostmanCollection',
        response: {
          200: { description: 'Postman Collection v2.1', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } },
        },
      },
    },
    async (_request, reply) => {
      collection ??= convertInThread(app.swagger()).catch((err: unknown) => {
        collection = null;
        throw err;
      });
      return sendSerialized(reply, await collection);
    },
  );
}
