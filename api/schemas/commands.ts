/** Device commands: the request, the command object, lists, and each protocol's command types. */
import { Type, type Static } from '@sinclair/typebox';
import { COMMAND_STATUSES, COMMAND_TYPES, MAX_TTL_S } from '../../core/command-types.js';
import { Limit, Nullable, Pagination, Timestamp } from './common.js';

const CommandType = Type.Unsafe<string>({ type: 'string', enum: [...COMMAND_TYPES] });

export const CommandResponse = Type.Object({
  text: Nullable(Type.String({ description: 'The reply text (Teltonika codec 12/14, GT06 0x15/0x21), when the unit sent one' })),
  result_code: Nullable(Type.Integer({ description: 'The protocol result code (JT/T 808 0x0001: 0 ok, 1 failure, 2 bad message, 3 unsupported)' })),
  raw_hex: Type.String({ description: 'The reply as received, in hex' }),
});

export const Command = Type.Object({
  id: Type.String({ description: '`cmd_…`' }),
  device_id: Type.String(),
  type: CommandType,
  params: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()])),
  status: Type.Unsafe<string>({
    type: 'string',
    enum: [...COMMAND_STATUSES],
    description: 'queued → sent → acknowledged → succeeded or failed; or expired (never sent), cancelled, rejected (the protocol cannot carry it)',
  }),
  waiting_for: Nullable(Type.Literal('vehicle_stopped', { description: 'A queued engine stop held until the vehicle stops' })),
  created_at: Timestamp,
  sent_at: Nullable(Timestamp),
  acknowledged_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  expires_at: Timestamp,
  response: Nullable(CommandResponse),
  error: Nullable(Type.String({ description: '`expired`, `no_reply`, `device_failed`, `unsupported`, `bad_message`, `imei_mismatch`, `output_unchanged`, or the gateway\'s rejection reason' })),
});

export const CreateCommandBody = Type.Object(
  {
    type: CommandType,
    params: Type.Optional(
      Type.Record(Type.String({ maxLength: 32 }), Type.Union([Type.String({ maxLength: 2048 }), Type.Number()]), {
        maxProperties: 4,
        description: "The type's params (GET /v1/devices/{id}/command-types lists them)",
      }),
    ),
    ttl_s: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_TTL_S, description: 'Seconds a command may wait to be sent: default 300 for engine_stop/engine_resume, 86400 for others, at most 7 days' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCommandBody = Static<typeof CreateCommandBody>;

export const CreateCommandHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'Retries with the same key within 24 h return the same command; another request under it is a 422',
    }),
  ),
});

export const ListCommandsQuery = Type.Object(
  {
    limit: Limit(200),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    status: Type.Optional(Type.String({ pattern: `^(${COMMAND_STATUSES.join('|')})(,(${COMMAND_STATUSES.join('|')}))*$`, description: 'Statuses, comma-separated' })),
  },
  { additionalProperties: false },
);
export type ListCommandsQuery = Static<typeof ListCommandsQuery>;

export const CommandList = Type.Object({ data: Type.Array(Command), pagination: Pagination });

const ParamSpec = Type.Object({
  name: Type.String(),
  kind: Type.Union([Type.Literal('integer'), Type.Literal('string'), Type.Literal('hex'), Type.Literal('enum')]),
  required: Type.Boolean(),
  minimum: Type.Optional(Type.Integer()),
  maximum: Type.Optional(Type.Integer()),
  min_length: Type.Optional(Type.Integer()),
  max_length: Type.Optional(Type.Integer()),
  values: Type.Optional(Type.Array(Type.String())),
  one_of: Type.Optional(Type.String({ description: 'Params sharing this group exclude each other: give exactly one' })),
  description: Type.String(),
});

export const CommandTypeList = Type.Object({
  protocol: Nullable(Type.String({ description: "The device's protocol; null until it is bound (every type is accepted meanwhile)" })),
  data: Type.Array(
    Type.Object({
      type: CommandType,
      description: Type.String(),
      default_ttl_s: Type.Integer(),
      params: Type.Array(ParamSpec),
      text: Type.Optional(Nullable(Type.String({ description: 'engine_stop/engine_resume: the text this device is sent (its override or the protocol default)' }))),
    }),
  ),
});
