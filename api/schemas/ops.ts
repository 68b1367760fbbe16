import { Type } from '@sinclair/typebox';

export const Readiness = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Object({
    store: Type.Literal('ok'),
    projections: Type.Object({
      lag_events: Type.Integer({ description: 'Events stored but not yet applied (counted up to 1000)' }),
      lag_seconds: Type.Number({ description: 'Age of the oldest event not yet applied' }),
      max_lag_seconds: Type.Number(),
    }),
  }),
});
