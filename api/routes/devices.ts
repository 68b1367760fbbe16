/** Devices: register, read, update, list. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerDevice, updateDevice } from '../../core/commands/devices.js';
import type { DeviceStatus } from '../../projections/index.js';
import type { ApiContext } from '../context.js';
import { authOf } from '../plugins/auth.js';
import { ListCursor, idKey } from '../pagination.js';
import { notFound } from '../problem.js';
import { deviceById, devicePage } from '../queries/devices.js';
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
      const { device_id: deviceId, position } = await registerDevice(ctx.store, ctx.clock, { ...request.body, customer_id: auth.customerId });
      await ctx.waitFor(position);
      const device = deviceById(ctx.readModelDb, auth.customerId, deviceId);
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
      const device = deviceById(ctx.readModelDb, auth.customerId, request.params.id);
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
      const position = await updateDevice(ctx.store, ctx.clock, { customer_id: auth.customerId, device_id: request.params.id, changes: request.body });
      if (position) await ctx.waitFor(position);
      return deviceBody(deviceById(ctx.readModelDb, auth.customerId, request.params.id)!);
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
      const cursor = cursors.for(filters);
      const afterId = cursor.decode(q.cursor);
      const rows = devicePage(ctx.readModelDb, auth.customerId, {
        afterId,
        limit: q.limit + 1,
        statuses,
        groupId: q.group_id ?? null,
      });
      const result = cursor.page(rows, q.limit, (d) => d.device_id);
      return { data: result.data.map(deviceBody), pagination: result.pagination };
    },
  );
}
