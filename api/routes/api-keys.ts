/**
 * API keys of the caller's tenant (scope api_keys:manage): create (the secret
 * is shown once), list (never the secret), revoke. A credential cannot grant
 * a scope it does not hold itself.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Scope } from '../../core/events.js';
import { createApiKey, revokeApiKey } from '../../core/commands/credentials.js';
import type { ApiContext } from '../context.js';
import { apiKeyById, apiKeyPage, credentialLookup, type ApiKeyRecord } from '../queries/credentials.js';
import type { KeyUsageRecorder } from '../key-usage.js';
import { NO_STORE } from '../no-store.js';
import { ListCursor, idKey } from '../pagination.js';
import { authOf, hasScope } from '../plugins/auth.js';
import { ApiError } from '../problem.js';
import { ApiKeyList, CreateApiKeyBody, CreatedApiKey, CredentialIdParams, ListApiKeysQuery } from '../schemas/api-keys.js';
import { iso } from '../schemas/common.js';
import { problemResponse } from '../schemas/error-responses.js';

const cursors = new ListCursor('api-keys', idKey);

/** 403 when `requested` holds a scope the caller's credential lacks (write implies read). */
export function refuseUngrantableScopes(granted: readonly Scope[], requested: readonly Scope[]): void {
  const index = requested.findIndex((s) => !hasScope(granted, s));
  if (index < 0) return;
  throw new ApiError(403, 'insufficient_scope', `You cannot grant ${requested[index]}: your credential does not have it.`, [
    { pointer: `/body/scopes/${index}`, message: 'not held by the creating credential' },
  ]);
}

export async function apiKeysRoutes(app: FastifyInstance, ctx: ApiContext, keyUsage: KeyUsageRecorder): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.readModelDb;
  const credentials = credentialLookup(db);

  const keyBody = (k: ApiKeyRecord) => {
    // The read model lags the flush interval; this node's memory may know a later use.
    const lastUsed = Math.max(k.last_used_at ?? 0, keyUsage.lastUsed(k.key_id) ?? 0);
    return {
      id: k.key_id,
      name: k.name,
      scopes: k.scopes,
      created_at: iso(k.created_at),
      last_used_at: lastUsed > 0 ? iso(lastUsed) : null,
      revoked_at: iso(k.revoked_at),
    };
  };

  r.post(
    '/v1/api-keys',
    {
      config: { scope: 'api_keys:manage' },
      schema: {
        tags: ['API keys'],
        summary: 'Create an API key (the secret is shown once)',
        operationId: 'createApiKey',
        body: CreateApiKeyBody,
        response: {
          201: CreatedApiKey,
          403: problemResponse(
            'The credential lacks api_keys:manage, or a scope the new key would get (`insufficient_scope`; `errors[].pointer` names it)',
          ),
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      refuseUngrantableScopes(auth.scopes, request.body.scopes);
      const key = await createApiKey(ctx.store, ctx.clock, { customer_id: auth.customerId, name: request.body.name, scopes: request.body.scopes });
      await ctx.waitFor(key.position);
      const created = apiKeyById(db, auth.customerId, key.key_id);
      if (!created) throw new Error(`key ${key.key_id} missing from the read model after creation`);
      return reply
        .status(201)
        .headers(NO_STORE)
        .send({ ...keyBody(created), secret: key.secret });
    },
  );

  r.get(
    '/v1/api-keys',
    {
      config: { scope: 'api_keys:manage' },
      schema: {
        tags: ['API keys'],
        summary: 'List API keys (revoked ones included; never the secrets)',
        operationId: 'listApiKeys',
        querystring: ListApiKeysQuery,
        response: { 200: ApiKeyList },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const cursor = cursors.for({});
      const rows = apiKeyPage(db, auth.customerId, cursor.decode(request.query.cursor), request.query.limit + 1);
      const result = cursor.page(rows, request.query.limit, (k) => k.key_id);
      return { data: result.data.map(keyBody), pagination: result.pagination };
    },
  );

  r.delete(
    '/v1/api-keys/:id',
    {
      config: { scope: 'api_keys:manage' },
      schema: {
        tags: ['API keys'],
        summary: 'Revoke an API key; it is refused from then on',
        operationId: 'revokeApiKey',
        params: CredentialIdParams,
        response: { 204: Type.Null({ description: 'Revoked (also when it already was)' }) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const position = await revokeApiKey(ctx.store, ctx.clock, credentials, { customer_id: auth.customerId, key_id: request.params.id });
      if (position) await ctx.waitFor(position);
      return reply.status(204).send(null);
    },
  );
}
