/** Devices: register, read, update, list. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WrongExpectedRevisionError } from '../../core/event-store/port.js';
import type { DeviceClaim } from '../../core/events.js';
import { newId, randomUuid } from '../../core/ids.js';
import { isValidImei, normalizeTerminalId } from '../../core/imei.js';
import { streams } from '../../core/streams.js';
import type { DeviceStatus } from '../../projections/index.js';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { driverById } from '../queries/drivers.js';
import { ListCursor, idKey } from '../pagination.js';
import { ApiError, notFound } from '../problem.js';
import { Device, DeviceList, ListDevicesQuery, RegisterDeviceBody, UpdateDeviceBody, deviceBody } from '../schemas/devices.js';
import { problemResponse } from '../schemas/error-responses.js';

const cursors = new ListCursor('devices', idKey);

export async function deviceRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    '/v1/devices',
    {
      config: { scope: 'devices:write' },
      schema: {
        tags: ['Devices'],
        summary: 'Register a device',
        operationId: 'createDevice',
        body: RegisterDeviceBody,
        response: {
          201: Device,
          409: problemResponse('The IMEI (in any account) or the terminal_id is already registered (`imei_taken`, `terminal_taken`)'),
        },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const body = request.body;
      if (!isValidImei(body.imei)) {
        throw new ApiError(400, 'validation_failed', 'imei must be 15 digits with a valid Luhn check digit.', [
          { pointer: '/body/imei', message: 'fails the Luhn check' },
        ]);
      }
      if (body.driver_id && !driverById(ctx.readModels.db, auth.customerId, body.driver_id)) {
        // Another customer's driver is as unknown as a made-up id.
        throw new ApiError(400, 'validation_failed', `driver ${body.driver_id} does not exist`, [
          { pointer: '/body/driver_id', message: 'unknown driver' },
        ]);
      }
      const now = ctx.clock.now();
      const deviceId = newId('dev', now);
      const terminalId = body.terminal_id ? normalizeTerminalId(body.terminal_id) || null : null;
      const claim: DeviceClaim = {
        device_id: deviceId,
        customer_id: auth.customerId,
        imei: body.imei,
        model: body.model,
        terminal_id: terminalId,
        claimed_at: now,
      };
      if (terminalId && (await ctx.store.readStream(streams.terminal(terminalId), { maxCount: 1 })).length > 0) {
        throw new ApiError(409, 'terminal_taken', `terminal_id ${terminalId} is already registered.`);
      }
      try {
        await ctx.store.appendToStream(streams.imei(body.imei), [{ id: randomUuid(), type: 'ImeiClaimed', data: claim }], {
          expectedRevision: 'no_stream',
        });
        if (terminalId) {
          await ctx.store.appendToStream(
            streams.terminal(terminalId),
            [{ id: randomUuid(), type: 'TerminalClaimed', data: claim }],
            { expectedRevision: 'no_stream' },
          );
        }
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError) {
          const which = err.stream.startsWith('imei-') ? 'imei' : 'terminal';
          throw new ApiError(409, `${which}_taken`, `This ${which === 'imei' ? 'IMEI' : 'terminal_id'} is already registered.`);
        }
        throw err;
      }
      const result = await ctx.store.appendToStream(
        streams.device(deviceId),
        [
          {
            id: randomUuid(),
            type: 'DeviceRegistered',
            data: {
              device_id: deviceId,
              customer_id: auth.customerId,
              imei: body.imei,
              model: body.model,
              name: body.name ?? null,
              group_id: body.group_id ?? null,
              driver_id: body.driver_id ?? null,
              terminal_id: terminalId,
              speed_limit_kmh: body.speed_limit_kmh ?? null,
              created_at: now,
            },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      await ctx.waitFor(result.position);
      const device = ctx.readModels.device(auth.customerId, deviceId);
      if (!device) throw new Error(`device ${deviceId} missing from read model after registration`);
      return reply.status(201).header('Location', `/v1/devices/${deviceId}`).send(deviceBody(device));
    },
  );

  r.get(
    '/v1/devices/:id',
    {
      config: { scope: 'devices:read' },
      schema: { tags: ['Devices'], summary: 'Get a device', operationId: 'getDevice', params: Type.Object({ id: Type.String({ maxLength: 64 }) }), response: { 200: Device } },
    },
    async (request) => {
      const auth = authOf(request);
      const device = ctx.readModels.device(auth.customerId, request.params.id);
      if (!device) throw notFound('device', request.params.id);
      return deviceBody(device);
    },
  );

  r.patch(
    '/v1/devices/:id',
    {
      config: { scope: 'devices:write' },
      schema: { tags: ['Devices'], summary: 'Update a device', operationId: 'updateDevice', params: Type.Object({ id: Type.String({ maxLength: 64 }) }), body: UpdateDeviceBody, response: { 200: Device } },
    },
    async (request) => {
      const auth = authOf(request);
      const device = ctx.readModels.device(auth.customerId, request.params.id);
      if (!device) throw notFound('device', request.params.id);
      const body = request.body;
      if (body.driver_id && !driverById(ctx.readModels.db, auth.customerId, body.driver_id)) {
        throw new ApiError(400, 'validation_failed', `driver ${body.driver_id} does not exist`, [
          { pointer: '/body/driver_id', message: 'unknown driver' },
        ]);
      }
      // The event carries only what changes; an unchanged patch writes nothing.
      const changes: Record<string, string | number | null> = {};
      for (const field of ['name', 'group_id', 'driver_id', 'speed_limit_kmh'] as const) {
        const value = body[field];
        if (value !== undefined && value !== device[field]) changes[field] = value;
      }
      if (Object.keys(changes).length === 0) return deviceBody(device);
      const result = await ctx.store.appendToStream(streams.device(device.device_id), [
        {
          id: randomUuid(),
          type: 'DeviceUpdated',
          data: { device_id: device.device_id, customer_id: auth.customerId, changes, updated_at: ctx.clock.now() },
        },
      ]);
      await ctx.waitFor(result.position);
      return deviceBody(ctx.readModels.device(auth.customerId, device.device_id)!);
    },
  );

  r.get(
    '/v1/devices',
    { config: { scope: 'devices:read' }, schema: { tags: ['Devices'], summary: 'List devices', operationId: 'listDevices', querystring: ListDevicesQuery, response: { 200: DeviceList } } },
    async (request) => {
      const auth = authOf(request);
      const q = request.query;
      const statuses = q.status ? ([...new Set(q.status.split(','))] as DeviceStatus[]) : null;
      const filters = { group_id: q.group_id ?? null, status: statuses };
      const afterId = cursors.decode(q.cursor, filters);
      const rows = ctx.readModels.devices(auth.customerId, {
        afterId,
        limit: q.limit + 1,
        statuses,
        groupId: q.group_id ?? null,
      });
      const result = cursors.page(rows, q.limit, (d) => d.device_id, filters);
      return { data: result.data.map(deviceBody), pagination: result.pagination };
    },
  );
}
