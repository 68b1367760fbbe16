/** Placeholder: filled in by its owner. */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';

export async function oauthRoutes(_app: FastifyInstance, _ctx: ApiContext): Promise<void> {}
