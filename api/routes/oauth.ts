/**
 * OAuth2 client credentials: clients created by a customer for an integrator
 * (scope api_keys:manage), and the public token endpoint. Tokens are random
 * secrets (`fleet_at_…`) of which only the SHA-256 is stored, in an
 * OAuthTokenIssued event of the tenant stream; they expire after an hour and
 * die with their client. Failed client authentications and issuance per
 * client are limited (TokenEndpointLimits), so no client appends more than a
 * bounded number of token events a minute.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { hashesEqual, sha256Hex } from '../../core/credentials.js';
import { createOAuthClient, deleteOAuthClient, issueOAuthToken } from '../../core/commands/credentials.js';
import type { ApiContext } from '../context.js';
import { credentialLookup, oauthClientById, oauthClientPage, type OAuthClientRecord } from '../queries/credentials.js';
import { OAuthError, TOKEN_TTL_S, TokenEndpointLimits, grantedScopes, parseTokenRequest } from '../oauth-token.js';
import { NO_STORE } from '../no-store.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf } from '../plugins/auth.js';
import { sendProblem } from '../plugins/errors.js';
import { ApiError } from '../problem.js';
import { iso } from '../schemas/common.js';
import {
  CreateOAuthClientBody,
  CreatedOAuthClient,
  ListOAuthClientsQuery,
  OAuthClientList,
  OAuthClientParams,
  OAuthErrorBody,
  TokenRequest,
  TokenResponse,
} from '../schemas/oauth.js';
import { refuseUngrantableScopes } from './api-keys.js';

const cursors = new ListCursor('oauth-clients', idKey);

/** Hashed when the client id is unknown, so a miss costs what a hit costs. */
const DUMMY_HASH = sha256Hex('no such client');

function clientBody(c: OAuthClientRecord) {
  return { client_id: c.client_id, name: c.name, scopes: c.scopes, created_at: iso(c.created_at) };
}

/** A token request is a few short fields; anything near this is not one. */
const TOKEN_BODY_LIMIT_BYTES = 8 * 1024;

/**
 * The error of a token request in RFC 6749 terms: a bad request is invalid_request (400, or 413 for a body
 * too large, which the RFC does not cover), whatever raised it; server faults are null (they stay problem+json).
 */
function asOAuthError(err: FastifyError | OAuthError | ApiError): OAuthError | null {
  if (err instanceof OAuthError) return err;
  const status = err instanceof ApiError ? err.status : (err.statusCode ?? 500);
  if (status >= 500) return null;
  if (status === 413) return new OAuthError(413, 'invalid_request', `The request body is larger than ${TOKEN_BODY_LIMIT_BYTES} bytes.`);
  if (status === 415) return new OAuthError(400, 'invalid_request', 'Send the parameters as application/x-www-form-urlencoded or JSON.');
  return new OAuthError(400, 'invalid_request', err instanceof ApiError ? err.detail : err.message);
}

/** RFC 6749 §5.2 errors for the token endpoint. */
function tokenErrorHandler(err: FastifyError | OAuthError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  const oauth = asOAuthError(err);
  if (!oauth) {
    request.log.error({ err }, 'token request failed');
    return sendProblem(request, reply, new ApiError(500, 'internal_error', 'An unexpected error occurred; it has been logged.'));
  }
  if (oauth.status === 401) reply.header('WWW-Authenticate', 'Basic realm="fleet"');
  if (oauth.retryAfterS !== undefined) reply.header('Retry-After', String(oauth.retryAfterS));
  return reply.status(oauth.status).headers(NO_STORE).send({ error: oauth.error, error_description: oauth.description });
}

export async function oauthRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;
  const credentials = credentialLookup(db);
  const limits = new TokenEndpointLimits(ctx.clock);

  r.post(
    '/v1/oauth/clients',
    {
      config: { scope: 'api_keys:manage' },
      schema: {
        tags: ['OAuth'],
        summary: 'Create an OAuth client for an integrator (the secret is shown once)',
        operationId: 'createOAuthClient',
        body: CreateOAuthClientBody,
        response: { 201: CreatedOAuthClient },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      refuseUngrantableScopes(auth.scopes, request.body.scopes);
      const created = await createOAuthClient(ctx.store, ctx.clock, { customer_id: auth.customerId, name: request.body.name, scopes: request.body.scopes });
      await ctx.waitFor(created.position);
      return reply
        .status(201)
        .headers(NO_STORE)
        .send({ ...clientBody({ ...created.client, deleted_at: null }), client_secret: created.client_secret });
    },
  );

  r.get(
    '/v1/oauth/clients',
    {
      config: { scope: 'api_keys:manage' },
      schema: {
        tags: ['OAuth'],
        summary: 'List OAuth clients',
        operationId: 'listOAuthClients',
        querystring: ListOAuthClientsQuery,
        response: { 200: OAuthClientList },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const cursor = cursors.for({});
      const rows = oauthClientPage(db, auth.customerId, cursor.decode(request.query.cursor), request.query.limit + 1);
      const result = cursor.page(rows, request.query.limit, (c) => c.client_id);
      return { data: result.data.map(clientBody), pagination: result.pagination };
    },
  );

  r.delete(
    '/v1/oauth/clients/:client_id',
    {
      config: { scope: 'api_keys:manage' },
      schema: {
        tags: ['OAuth'],
        summary: 'Delete an OAuth client; its tokens stop working at once',
        operationId: 'deleteOAuthClient',
        params: OAuthClientParams,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      await ctx.waitFor(await deleteOAuthClient(ctx.store, ctx.clock, credentials, { customer_id: auth.customerId, client_id: request.params.client_id }));
      return reply.status(204).send(null);
    },
  );

  // Its own encapsulated scope: the form parser and RFC 6749 errors apply to this route only.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/v1/oauth/token',
      {
        errorHandler: tokenErrorHandler,
        bodyLimit: TOKEN_BODY_LIMIT_BYTES,
        // The handler checks the body itself, so that every mistake is answered in the RFC's shape.
        attachValidation: true,
        schema: {
          tags: ['OAuth'],
          summary: 'Obtain an access token (client credentials grant)',
          operationId: 'issueOAuthToken',
          description:
            'RFC 6749 §4.4. Authenticate the client with `client_id` and `client_secret` in the body or with HTTP Basic. ' +
            'Errors follow RFC 6749 §5.2 (`{"error","error_description"}`), not problem+json.',
          body: {
            content: {
              'application/x-www-form-urlencoded': { schema: TokenRequest },
              'application/json': { schema: TokenRequest },
            },
          },
          response: {
            200: TokenResponse,
            400: OAuthErrorBody,
            401: OAuthErrorBody,
            413: OAuthErrorBody,
            429: {
              description:
                '`rate_limited`: 10 failed client authentications in 15 minutes for this client or from this address, or more than 30 tokens a minute (bursts of 20) for this client',
              headers: { 'Retry-After': { type: 'string', description: 'Seconds until a request may be made again' } },
              content: { 'application/json': { schema: OAuthErrorBody } },
            },
          },
        },
      },
      async (request, reply) => {
        const req = parseTokenRequest(request.body, request.headers.authorization);
        // Counted before the secret is checked (an unknown client waits for catch-up), so requests sent at once cannot all pass.
        const attempt = limits.beginAuthentication(req.clientId, request.ip);
        let client = oauthClientById(db, req.clientId);
        if (!client) {
          await ctx.catchUp().catch((err: unknown) => {
            attempt.abandon();
            throw err;
          });
          client = oauthClientById(db, req.clientId);
        }
        const secretHash = sha256Hex(req.clientSecret);
        const secretOk = hashesEqual(client?.secret_sha256 ?? DUMMY_HASH, secretHash);
        if (!client || !secretOk || client.deleted_at !== null) {
          attempt.failed();
          throw new OAuthError(401, 'invalid_client', 'Unknown client, wrong secret, or the client was deleted.');
        }
        // A right secret does not clear the client's failures: client ids are not secret, and the limit is on guessing from anywhere.
        attempt.succeeded();
        const scopes = grantedScopes(client.scopes, req.scopes);
        // The only append of this endpoint; its bucket bounds the events a client adds to the log.
        limits.takeIssuance(client.client_id);
        const { token, position } = await issueOAuthToken(ctx.store, ctx.clock, {
          customer_id: client.customer_id,
          client_id: client.client_id,
          scopes,
          ttl_s: TOKEN_TTL_S,
        });
        await ctx.waitFor(position);
        return reply
          .headers(NO_STORE)
          .send({ access_token: token, token_type: 'Bearer' as const, expires_in: TOKEN_TTL_S, scope: scopes.join(' ') });
      },
    );
  });
}
