/**
 * Access control for the routes that name a scope in `config.scope`: who you
 * are, then your tenant's budget, then what you may do, in that order. The
 * hooks are attached to each such route when it is added (route-level
 * onRequest hooks), so public routes run none of them and a request never looks
 * its route's configuration up: Fastify's `request.routeOptions` builds a new
 * object on every read.
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { ApiSettings } from '../context.js';
import { authenticationHook, scopeCheckHook, scopesOf, type AuthDeps } from './auth.js';
import { rateLimitHook } from './rate-limit.js';
import type { SharedBudgets } from '../shared-rate-limit.js';

/** Call before adding routes: only routes added afterwards get the hooks. */
export function registerAccessControl(
  app: FastifyInstance,
  deps: AuthDeps,
  clock: Clock,
  rateLimits: ApiSettings['rateLimits'],
  shared: SharedBudgets | null,
): void {
  const authenticate = authenticationHook(app, deps);
  const limitRate = rateLimitHook(clock, rateLimits, shared);
  app.addHook('onRoute', (route) => {
    const needed = scopesOf(route.config?.scope);
    if (!needed) return;
    const own: onRequestHookHandler[] = route.onRequest ? [route.onRequest].flat() : [];
    // A new array: Fastify copies a GET route's options for its HEAD twin, which gets its own onRoute call.
    route.onRequest = [authenticate, limitRate, scopeCheckHook(needed), ...own];
  });
}
