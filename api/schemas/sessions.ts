/** Panel sessions: login body and the session answer. */
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.js';

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254, description: 'Any letter case' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const Session = Type.Object({
  user: Type.Object({
    user_id: Type.String({ description: '`usr_…`' }),
    email: Type.String(),
    name: Type.String(),
    customer_id: Type.String(),
  }),
  customer: Type.Object({
    customer_id: Type.String({ description: '`cus_…`' }),
    name: Type.String(),
    plan: Type.Union([Type.Literal('free'), Type.Literal('pro'), Type.Literal('enterprise')]),
  }),
  csrf_token: Type.String({ description: 'Send it as `X-CSRF-Token` on every POST, PUT, PATCH and DELETE made with the session cookie' }),
  expires_at: Timestamp,
});
