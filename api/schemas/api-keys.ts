import { Type, type Static } from '@sinclair/typebox';
import { Limit, Nullable, Pagination, Timestamp } from './common.js';
import { CredentialName, ScopeList } from './credentials.js';

export const CreateApiKeyBody = Type.Object({ name: CredentialName, scopes: ScopeList }, { additionalProperties: false });
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ApiKey = Type.Object({
  id: Type.String({ description: '`key_…`' }),
  name: Type.String(),
  scopes: ScopeList,
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  secret: Type.String({ description: 'The credential for `Authorization: Bearer`; shown only in this response' }),
});

export const ApiKeyList = Type.Object({ data: Type.Array(ApiKey), pagination: Pagination });

export const ListApiKeysQuery = Type.Object(
  { limit: Limit(200), cursor: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>;

export const CredentialIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
