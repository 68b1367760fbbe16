import { Type, type Static } from '@sinclair/typebox';
import { Limit, Pagination, Timestamp } from './common.js';
import { CredentialName, ScopeList } from './credentials.js';

export const CreateOAuthClientBody = Type.Object({ name: CredentialName, scopes: ScopeList }, { additionalProperties: false });
export type CreateOAuthClientBody = Static<typeof CreateOAuthClientBody>;

export const OAuthClient = Type.Object({
  client_id: Type.String({ description: '`cli_…`' }),
  name: Type.String(),
  scopes: ScopeList,
  created_at: Timestamp,
});

export const CreatedOAuthClient = Type.Object({
  ...OAuthClient.properties,
  client_secret: Type.String({ description: 'Shown only in this response' }),
});

export const OAuthClientList = Type.Object({ data: Type.Array(OAuthClient), pagination: Pagination });

export const ListOAuthClientsQuery = Type.Object(
  { limit: Limit(200), cursor: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);
export type ListOAuthClientsQuery = Static<typeof ListOAuthClientsQuery>;

export const OAuthClientParams = Type.Object({ client_id: Type.String({ maxLength: 64 }) });

/**
 * RFC 6749 §4.4.2. Loose on purpose: the handler checks the fields itself so
 * every mistake is answered in the RFC's error shape, not as problem+json.
 */
export const TokenRequest = Type.Object({
  grant_type: Type.String({ description: '`client_credentials`' }),
  client_id: Type.Optional(Type.String({ description: 'Or send the client credentials with HTTP Basic' })),
  client_secret: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String({ description: 'Space-separated subset of the client\'s scopes; all of them when absent' })),
});

export const TokenResponse = Type.Object({
  access_token: Type.String({ description: '`fleet_at_…`, for `Authorization: Bearer`' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds' }),
  scope: Type.String({ description: 'Space-separated granted scopes' }),
});

export const OAuthErrorCode = Type.Union([
  Type.Literal('invalid_request'),
  Type.Literal('invalid_client'),
  Type.Literal('invalid_grant'),
  Type.Literal('unauthorized_client'),
  Type.Literal('unsupported_grant_type'),
  Type.Literal('invalid_scope'),
  // Ours (RFC 6749 §8.5 allows extensions): the 429 of the endpoint's limits, with Retry-After.
  Type.Literal('rate_limited'),
]);
export type OAuthErrorCode = Static<typeof OAuthErrorCode>;

export const OAuthErrorBody = Type.Object({ error: OAuthErrorCode, error_description: Type.String() });
