/** Owns the HTTP listener: start and graceful stop of the Fastify app. */
import type { FastifyInstance } from 'fastify';

export async function listen(app: FastifyInstance, host: string, port: number): Promise<number> {
  await app.listen({ host, port });
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : port;
}

export async function stopApi(app: FastifyInstance): Promise<void> {
  await app.close();
}
