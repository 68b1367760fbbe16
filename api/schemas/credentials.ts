/** Schemas shared by API keys and OAuth clients: scopes and credential names. */
import { Type } from '@sinclair/typebox';
import { ALL_SCOPES, type Scope } from '../../core/events.js';

/** One scope (docs/api-decisions.md, Authentication); an enum (not a union of literals) so validation errors and the docs stay short. */
export const ScopeSchema = Type.Unsafe<Scope>({
  type: 'string',
  enum: [...ALL_SCOPES],
  description: 'A permission; `…:write` implies the matching `…:read`.',
});

export const ScopeList = Type.Array(ScopeSchema, { minItems: 1, maxItems: ALL_SCOPES.length, uniqueItems: true });

export const CredentialName = Type.String({ minLength: 1, maxLength: 128, description: 'Shown in lists; helps you tell credentials apart' });
