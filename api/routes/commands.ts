/**
 * Device commands: queue one for a device (with an optional Idempotency-Key),
 * read it, list a device's, cancel one not yet sent, and list what the
 * device's protocol can be sent. Writes answer once the read model holds
 * them, as the other command routes do.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { COMMAND_TYPE_SPECS, commandTypesFor, engineCommandText, type CommandTexts, type CommandTypeName } from '../../core/command-types.js';
import { commandView } from '../../core/command-view.js';
import { requestCommand } from '../../core/commands/command-requests.js';
import { cancelCommand } from '../../core/commands/device-commands.js';
import type { DeviceProtocol } from '../../core/events.js';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { ListCursor, timeAndIdKey } from '../pagination.js';
import { notFound } from '../problem.js';
import { commandById, commandPage } from '../queries/commands.js';
import { deviceById } from '../queries/devices.js';
import { Command, CommandList, CommandTypeList, CreateCommandBody, CreateCommandHeaders, ListCommandsQuery } from '../schemas/commands.js';
import { problemResponse } from '../schemas/error-responses.js';

const cursors = new ListCursor('commands', timeAndIdKey);
const Id = Type.Object({ id: Type.String({ maxLength: 64 }) });

export async function commandsRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  /** The command as the read model holds it once `position` (or everything stored, for a replayed key) is applied. */
  const readBack = async (customerId: string, commandId: string, position: Parameters<ApiContext['waitFor']>[0] | null) => {
    if (position) await ctx.waitFor(position);
    else await ctx.catchUp();
    const command = commandById(ctx.readModelDb, customerId, commandId);
    if (!command) throw new Error(`command ${commandId} missing from the read model after its append`);
    return command;
  };

  r.post(
    '/v1/devices/:id/commands',
    {
      config: { scope: 'commands:write' },
      schema: {
        tags: ['Commands'],
        summary: 'Send a command to a device',
        operationId: 'createCommand',
        description:
          'Queues the command; the gateway sends it when the unit is connected (at once, or when it next logs in). ' +
          'An `engine_stop` waits for the vehicle to stop unless `params.when` is `now`. A command not sent by its ' +
          '`expires_at` becomes `expired` and is never sent. With an `Idempotency-Key`, the same request within 24 h ' +
          'answers the same command (header `Idempotent-Replayed: true`).',
        params: Id,
        headers: CreateCommandHeaders,
        body: CreateCommandBody,
        response: {
          202: Command,
          400: problemResponse("Invalid input (`validation_failed`), or a type the device's protocol lacks (`command_type_unsupported`)"),
          422: problemResponse('The Idempotency-Key was used in the last 24 h for another request (`idempotency_key_reused`)'),
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const key = request.headers['idempotency-key'];
      const requested = await requestCommand(ctx.store, ctx.clock, {
        customer_id: auth.customerId,
        device_id: request.params.id,
        type: request.body.type as CommandTypeName,
        params: request.body.params,
        ttl_s: request.body.ttl_s,
        idempotency_key: typeof key === 'string' ? key : undefined,
      });
      const command = await readBack(auth.customerId, requested.command_id, requested.position);
      if (requested.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.status(202).header('Location', `/v1/commands/${command.command_id}`).send(commandView(command));
    },
  );

  r.get(
    '/v1/commands/:id',
    { config: { scope: 'commands:read' }, schema: { tags: ['Commands'], summary: 'Get a command', operationId: 'getCommand', params: Id, response: { 200: Command } } },
    async (request) => {
      const command = commandById(ctx.readModelDb, authOf(request).customerId, request.params.id);
      if (!command) throw notFound('command', request.params.id);
      return commandView(command);
    },
  );

  r.delete(
    '/v1/commands/:id',
    {
      config: { scope: 'commands:write' },
      schema: {
        tags: ['Commands'],
        summary: 'Cancel a command not yet sent',
        operationId: 'cancelCommand',
        params: Id,
        response: { 200: Command, 409: problemResponse('The command was sent already or is finished (`command_not_cancellable`)') },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const found = commandById(ctx.readModelDb, auth.customerId, request.params.id);
      if (!found) throw notFound('command', request.params.id);
      const outcome = await cancelCommand(ctx.store, ctx.clock, { customer_id: auth.customerId, device_id: found.device_id, command_id: found.command_id });
      return commandView(await readBack(auth.customerId, found.command_id, outcome.position));
    },
  );

  r.get(
    '/v1/devices/:id/commands',
    {
      config: { scope: 'commands:read' },
      schema: { tags: ['Commands'], summary: "List a device's commands, newest first", operationId: 'listDeviceCommands', params: Id, querystring: ListCommandsQuery, response: { 200: CommandList } },
    },
    async (request) => {
      const auth = authOf(request);
      if (!deviceById(ctx.readModelDb, auth.customerId, request.params.id)) throw notFound('device', request.params.id);
      const q = request.query;
      const statuses = q.status ? [...new Set(q.status.split(','))] : null;
      const cursor = cursors.for({ device_id: request.params.id, status: statuses });
      const rows = commandPage(ctx.readModelDb, auth.customerId, request.params.id, { before: cursor.decode(q.cursor), limit: q.limit + 1, statuses });
      const page = cursor.page(rows, q.limit, (c) => ({ t: c.created_at, id: c.command_id }));
      return { data: page.data.map(commandView), pagination: page.pagination };
    },
  );

  r.get(
    '/v1/devices/:id/command-types',
    {
      config: { scope: 'commands:read' },
      schema: { tags: ['Commands'], summary: "The command types this device's protocol supports", operationId: 'listDeviceCommandTypes', params: Id, response: { 200: CommandTypeList } },
    },
    async (request) => {
      const device = deviceById(ctx.readModelDb, authOf(request).customerId, request.params.id);
      if (!device) throw notFound('device', request.params.id);
      const protocol = device.protocol as DeviceProtocol | null;
      const texts = device.command_texts ? (JSON.parse(device.command_texts) as CommandTexts) : null;
      return {
        protocol,
        data: commandTypesFor(protocol).map((type) => {
          const spec = COMMAND_TYPE_SPECS[type];
          const engine = type === 'engine_stop' || type === 'engine_resume';
          return { ...spec, ...(engine ? { text: protocol ? engineCommandText(protocol, type, texts) : (texts?.[type] ?? null) } : {}) };
        }),
      };
    },
  );
}
