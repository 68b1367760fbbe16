/** Shared TypeBox pieces: the single source for validation, serialisation and (later) OpenAPI. */
import { Type, type TSchema } from '@sinclair/typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 UTC with milliseconds' });

export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  instance: Type.String(),
  code: Type.String(),
  request_id: Type.String(),
  errors: Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() })),
});

export const Pagination = Type.Object({ next_cursor: Nullable(Type.String()), has_more: Type.Boolean() });

export const Limit = (max: number) => Type.Integer({ minimum: 1, maximum: max, default: 50 });

export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
