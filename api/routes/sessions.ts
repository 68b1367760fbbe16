/**
 * Panel sessions: log in with email and password (the token goes only into
 * the HttpOnly `fleet_session` cookie), read the current session, log out.
 * Logins are throttled per email and per client address, counted before the
 * password is checked (api/attempt-throttle.ts); an unknown email answers
 * like a wrong password.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { endSession, normalizeEmail, startSession } from '../../core/commands/users.js';
import { unknownUserHash } from '../../core/passwords.js';
import { settingsOf, type ApiContext } from '../context.js';
import { AttemptThrottle, LOGIN_LIMITS, isRefusal } from '../attempt-throttle.js';
import { NO_STORE } from '../no-store.js';
import { findSession, requireCsrf } from '../plugins/auth.js';
import { ApiError } from '../problem.js';
import type { SessionRecord } from '../queries/users.js';
import { iso } from '../schemas/common.js';
import { problemResponse } from '../schemas/error-responses.js';
import { LoginBody, Session } from '../schemas/sessions.js';
import { clearedSessionCookie, csrfTokenFor, sessionCookie, sessionTokenOf } from '../session-cookie.js';

/** How the routes with the cookie are documented: the `session` scheme (api/plugins/openapi.ts). */
const SESSION_SECURITY = [{ session: [] }];
const NO_SESSION = problemResponse('No session cookie, or the session ended or expired (`invalid_credentials`)');

export async function sessionsRoutes(app: FastifyInstance, ctx: ApiContext, csrfKey: Buffer): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { publicUrl } = settingsOf(ctx);
  const throttle = new AttemptThrottle(ctx.clock, LOGIN_LIMITS);
  // Worked out now, so the first login for an unknown email takes no longer than any other.
  void unknownUserHash();

  const sessionBody = (token: string, s: SessionRecord) => ({
    user: s.user,
    customer: s.customer,
    csrf_token: csrfTokenFor(csrfKey, token),
    expires_at: iso(s.expires_at),
  });

  /** The request's cookie token and its live session; 401 without one. */
  const current = async (request: FastifyRequest): Promise<{ token: string; session: SessionRecord }> => {
    const token = sessionTokenOf(request.headers.cookie);
    if (token === null) throw new ApiError(401, 'invalid_credentials', 'No session: log in first.', [], { 'WWW-Authenticate': 'Bearer realm="fleet"' });
    return { token, session: await findSession(token, ctx) };
  };

  r.post(
    '/v1/sessions',
    {
      schema: {
        tags: ['Sessions'],
        summary: 'Log in to the panel (sets the session cookie)',
        operationId: 'createSession',
        body: LoginBody,
        response: {
          201: { ...Session, description: 'Logged in; `Set-Cookie: fleet_session=…; HttpOnly; SameSite=Strict` carries the session' },
          401: problemResponse('The email or password is wrong (`invalid_login`); an unknown email answers the same'),
          429: problemResponse('Too many failed logins, or logins in progress, for this email or from this address (`too_many_login_attempts`)', {
            'Retry-After': { type: 'string', description: 'Seconds until a login may be tried again' },
          }),
        },
      },
    },
    async (request, reply) => {
      const emailKey = `email:${normalizeEmail(request.body.email)}`;
      const keys = [emailKey, `address:${request.ip}`];
      // The slot is taken before scrypt runs, so logins sent at once cannot all pass the check (a burst is refused at once).
      const attempt = throttle.begin(keys);
      if (isRefusal(attempt)) {
        throw new ApiError(429, 'too_many_login_attempts', `Too many failed or simultaneous logins; try again in ${attempt.retryAfterS} s.`, [], {
          'Retry-After': String(attempt.retryAfterS),
        });
      }
      // A fault (the store) says nothing about the password: it frees the slot.
      const started = await startSession(ctx.store, ctx.clock, request.body).catch((err: unknown) => {
        attempt.abandon();
        throw err;
      });
      if (!started) {
        attempt.failed();
        throw new ApiError(401, 'invalid_login', 'The email or password is wrong.');
      }
      attempt.succeeded([emailKey]);
      await ctx.waitFor(started.position);
      const session = await findSession(started.token, ctx);
      return reply
        .status(201)
        .headers({ ...NO_STORE, 'Set-Cookie': sessionCookie(started.token, request, publicUrl) })
        .send(sessionBody(started.token, session));
    },
  );

  r.get(
    '/v1/sessions/current',
    {
      schema: {
        tags: ['Sessions'],
        summary: 'The session of the cookie: user, customer and CSRF token',
        operationId: 'getCurrentSession',
        security: SESSION_SECURITY,
        response: { 200: Session, 401: NO_SESSION },
      },
    },
    async (request, reply) => {
      const { token, session } = await current(request);
      return reply.headers(NO_STORE).send(sessionBody(token, session));
    },
  );

  r.delete(
    '/v1/sessions/current',
    {
      schema: {
        tags: ['Sessions'],
        summary: 'Log out: end the session and clear its cookie',
        operationId: 'deleteCurrentSession',
        security: SESSION_SECURITY,
        response: {
          204: Type.Null({ description: 'Logged out; the cookie is cleared (`Max-Age=0`)' }),
          401: NO_SESSION,
          403: problemResponse('No `X-CSRF-Token`, or not the one of this session (`csrf_failed`)'),
        },
      },
    },
    async (request, reply: FastifyReply) => {
      const { token, session } = await current(request);
      requireCsrf(request, token, csrfKey);
      await ctx.waitFor(await endSession(ctx.store, ctx.clock, { session_id: session.session_id, ...session.user }));
      return reply.status(204).header('Set-Cookie', clearedSessionCookie(request, publicUrl)).send(null);
    },
  );
}
