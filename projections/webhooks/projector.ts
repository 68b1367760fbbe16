/**
 * The webhook projector: follows the log (run by a ProjectionRunner on the
 * delivery database) and turns every event an endpoint subscribed to into a
 * queued delivery, body bytes fixed now. It keeps what that needs beside the
 * queue: endpoints, each customer's plan, and devices (names and status, for
 * payloads and online/offline transitions). An endpoint sees the events
 * after its creation in log order, while it is enabled.
 *
 * A first attempt (and a redelivery) is due at once: `next_attempt_at` 0, so
 * it sorts before retries and in log order inside a customer's queue.
 *
 * What it queued is handed to delivery in memory once committed
 * (`takeHandOff`): the new rows themselves, so a lane whose every pending row
 * delivery holds is sent without reading them back, and the lanes whose
 * pending rows it no longer knows (a redelivery puts an old row back).
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '../../core/event-store/port.js';
import { positionToString } from '../../core/event-store/port.js';
import { namedId } from '../../core/ids.js';
import { evolveDevice, type DeviceRow } from '../devices/evolve.js';
import { batchHandler, type EventHandler, type Projection } from '../projection.js';
import type { SkipTypes } from '../runner.js';
import type { EventKind } from '../../core/alarms.js';
import type { HandOff, LaneRef } from '../../core/webhook-queue.js';
import { kindsMatching } from '../../core/webhook-kinds.js';
import { publishedCommandKind } from '../../core/command-view.js';
import { webhookMessages, type WebhookMessage } from './payload.js';

interface EndpointFilter {
  webhook_id: string;
  kinds: Set<EventKind>;
  device_ids: Set<string> | null;
}

export interface WebhookProjector extends Projection {
  /** What was queued since the last call, for delivery; call it once the batch is committed. */
  takeHandOff(): HandOff;
  /** Fixes are not read while no enabled endpoint takes `position.updated` (most of the log, parsed for nothing). */
  skip: SkipTypes;
}

/** The events after which the endpoints' kinds may differ (reloadFilters). */
const ENDPOINT_CHANGES: ReadonlySet<string> = new Set(['WebhookEndpointCreated', 'WebhookEndpointUpdated', 'WebhookEndpointDisabled', 'WebhookEndpointDeleted']);
const FIXES: readonly string[] = ['PositionRecorded'];
const NOTHING: readonly string[] = [];

const emptyHandOff = (): HandOff => ({ customers: new Set(), rates: new Set(), rows: [], untrack: [] });

/** What delivery keeps of endpoints in memory: told of every endpoint this projector changes, as it writes. */
export interface EndpointChanges {
  forget(webhookId: string): void;
}

/**
 * `endpoints`: delivery's cache of endpoints (webhook-delivery/endpoint-cache.ts).
 * `owns(webhookId)`: whether this node delivers the endpoint (scale-out shards); one node owns all by default.
 */
export function webhookProjector(endpoints: EndpointChanges, owns: (webhookId: string) => boolean = () => true): WebhookProjector {
  let handOff = emptyHandOff();
  /** Customers with an enabled endpoint that takes `position.updated` (kept per customer, as their endpoints reload). */
  const customersTakingFixes = new Set<string>();
  return {
    name: 'webhooks',
    skip: { types: () => (customersTakingFixes.size > 0 ? NOTHING : FIXES), changedBy: ENDPOINT_CHANGES },
    migrate() {
      // openDeliveryDb creates the tables: they must exist before the runner reads its checkpoint.
    },
    takeHandOff() {
      const out = handOff;
      handOff = emptyHandOff();
      return out;
    },
    prepare(db: Database.Database): EventHandler {
      const q = statements(db);
      /** Enabled endpoints by customer, as delivery filters. */
      const filters = new Map<string, EndpointFilter[]>();
      customersTakingFixes.clear();
      const reloadFilters = (customerId: string) => {
        const rows = q.enabledEndpoints.all(customerId) as Array<{ webhook_id: string; events: string; device_ids: string | null }>;
        if (rows.length === 0) filters.delete(customerId);
        else {
          filters.set(
            customerId,
            rows.map((r) => ({ webhook_id: r.webhook_id, kinds: kindsMatching(JSON.parse(r.events) as string[]), device_ids: r.device_ids ? new Set(JSON.parse(r.device_ids)) : null })),
          );
        }
        // This customer's endpoints only: at start every customer's are loaded, one after another.
        if (filters.get(customerId)?.some((f) => f.kinds.has('position.updated'))) customersTakingFixes.add(customerId);
        else customersTakingFixes.delete(customerId);
      };
      for (const c of q.customersWithEndpoints.pluck().all() as string[]) reloadFilters(c);
      /** Whether an endpoint of the customer takes `kind`: most fixes go to nobody, and build no payload. */
      const wanted = (customerId: string, kind: EventKind) => filters.get(customerId)?.some((f) => f.kinds.has(kind)) ?? false;
      const devices = new Map<string, DeviceRow>();
      const deviceRow = (id: string): DeviceRow | null => {
        const cached = devices.get(id);
        if (cached) return cached;
        const raw = q.device.pluck().get(id) as string | undefined;
        if (!raw) return null;
        const row = JSON.parse(raw) as DeviceRow;
        devices.set(id, row);
        return row;
      };

      const enqueue = (event: RecordedEvent, m: WebhookMessage) => {
        const endpoints = filters.get(m.customer_id);
        if (!endpoints) return;
        let body: string | null = null;
        for (const e of endpoints) {
          if (!e.kinds.has(m.payload.event) || (e.device_ids && !e.device_ids.has(m.device_id))) continue;
          body ??= JSON.stringify(m.payload);
          // Named by what it delivers, so every delivery node queues it under the same id.
          const deliveryId = namedId('dlv', event.created, `${e.webhook_id}|${m.payload.event_id}|${m.payload.event}`);
          const { lastInsertRowid } = q.insertDelivery.run(
            deliveryId, e.webhook_id, m.customer_id, m.device_id, m.payload.event_id, m.payload.event,
            m.occurred_at, body, event.created, null,
          );
          handOff.customers.add(m.customer_id);
          handOff.rows.push({
            seq: Number(lastInsertRowid), delivery_id: deliveryId, webhook_id: e.webhook_id, customer_id: m.customer_id, device_id: m.device_id,
            event_id: m.payload.event_id, kind: m.payload.event, attempts: 0, next_attempt_at: 0, body,
          });
        }
      };

      const handle = (event: RecordedEvent) => {
        const e = event;
        switch (e.type) {
          case 'CustomerCreated':
            q.upsertPlan.run(e.data.customer_id, e.data.plan);
            return;
          case 'CustomerWebhookLimitSet':
            q.setLimit.run(e.data.per_s, e.data.customer_id);
            handOff.customers.add(e.data.customer_id);
            handOff.rates.add(e.data.customer_id);
            return;
          case 'WebhookEndpointCreated': {
            const d = e.data;
            if (!owns(d.webhook_id)) return;
            q.insertEndpoint.run(d.webhook_id, d.customer_id, d.url, JSON.stringify(d.events), d.device_ids ? JSON.stringify(d.device_ids) : null, d.enabled ? 1 : 0, d.secret_ciphertext);
            endpoints.forget(d.webhook_id);
            reloadFilters(d.customer_id);
            return;
          }
          case 'WebhookEndpointUpdated': {
            const d = e.data;
            if (!owns(d.webhook_id)) return;
            if (d.url !== undefined) q.setUrl.run(d.url, d.webhook_id);
            if (d.events !== undefined) q.setEvents.run(JSON.stringify(d.events), d.webhook_id);
            if (d.device_ids !== undefined) q.setDevices.run(d.device_ids ? JSON.stringify(d.device_ids) : null, d.webhook_id);
            if (d.enabled !== undefined) q.setEnabled.run(d.enabled ? 1 : 0, d.webhook_id);
            endpoints.forget(d.webhook_id);
            reloadFilters(d.customer_id);
            return;
          }
          case 'WebhookSecretRotated':
            if (!owns(e.data.webhook_id)) return;
            q.rotate.run(e.data.secret_ciphertext, e.data.previous_valid_until, e.data.webhook_id);
            endpoints.forget(e.data.webhook_id);
            return;
          case 'WebhookEndpointDisabled':
            if (!owns(e.data.webhook_id)) return;
            q.setDisabled.run(e.data.webhook_id);
            endpoints.forget(e.data.webhook_id);
            reloadFilters(e.data.customer_id);
            return;
          case 'WebhookEndpointDeleted':
            if (!owns(e.data.webhook_id)) return;
            q.deleteEndpoint.run(e.data.webhook_id);
            q.cancelPending.run(e.data.webhook_id);
            endpoints.forget(e.data.webhook_id);
            reloadFilters(e.data.customer_id);
            return;
          case 'WebhookRedeliveryRequested': {
            if (!owns(e.data.webhook_id)) return;
            // Its latest attempt is only on its row, which the next attempt overwrites: keep it in the log of attempts.
            q.keepLatestAttempt.run(e.data.delivery_id, e.data.webhook_id, e.data.customer_id);
            const lane = q.redeliver.get(e.data.delivery_id, e.data.webhook_id, e.data.customer_id) as LaneRef | undefined;
            if (lane) {
              handOff.customers.add(lane.customer_id);
              handOff.untrack.push(lane);
            }
            return;
          }
          case 'WebhookReplayRequested': {
            const d = e.data;
            if (!owns(d.webhook_id)) return;
            q.insertReplay.run(d.replay_id, d.webhook_id, d.customer_id, d.from, d.to, d.events ? JSON.stringify(d.events) : null, positionToString(e.position), d.requested_at);
            return;
          }
          case 'DeviceRegistered':
          case 'DeviceUpdated':
          case 'DeviceConnected':
          case 'DeviceDisconnected': {
            const before = deviceRow(e.data.device_id);
            const after = evolveDevice(before, e);
            if (!after || after === before) return;
            devices.set(after.device_id, after);
            q.upsertDevice.run(after.device_id, JSON.stringify(after));
            for (const m of webhookMessages(e, before, after)) enqueue(e, m);
            return;
          }
          case 'DeviceCommandSent':
          case 'DeviceCommandSucceeded':
          case 'DeviceCommandFailed':
          case 'DeviceCommandExpired': {
            const kind = publishedCommandKind(e.type);
            if (!kind || !wanted(e.data.customer_id, kind)) return;
            const device = deviceRow(e.data.device_id);
            for (const m of webhookMessages(e, device, device)) enqueue(e, m);
            return;
          }
          case 'PositionRecorded':
          case 'DeviceEventRaised': {
            if (!wanted(e.data.customer_id, e.type === 'PositionRecorded' ? 'position.updated' : e.data.kind)) return;
            const device = deviceRow(e.data.device_id);
            for (const m of webhookMessages(e, device, device)) enqueue(e, m);
            return;
          }
          default:
            return;
        }
      };
      // Rows of a batch that rolled back were never committed: nothing to hand over.
      return batchHandler(handle, { flush() {}, discard: () => void (handOff = emptyHandOff()) });
    },
  };
}

function statements(db: Database.Database) {
  return {
    upsertPlan: db.prepare('INSERT INTO wh_customers (customer_id, plan) VALUES (?, ?) ON CONFLICT (customer_id) DO UPDATE SET plan = excluded.plan'),
    setLimit: db.prepare('UPDATE wh_customers SET per_s = ? WHERE customer_id = ?'),
    enabledEndpoints: db.prepare('SELECT webhook_id, events, device_ids FROM wh_endpoints WHERE customer_id = ? AND enabled = 1 AND deleted = 0'),
    customersWithEndpoints: db.prepare('SELECT DISTINCT customer_id FROM wh_endpoints WHERE enabled = 1 AND deleted = 0'),
    insertEndpoint: db.prepare(
      `INSERT OR IGNORE INTO wh_endpoints (webhook_id, customer_id, url, events, device_ids, enabled, secret) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    setUrl: db.prepare('UPDATE wh_endpoints SET url = ? WHERE webhook_id = ?'),
    setEvents: db.prepare('UPDATE wh_endpoints SET events = ? WHERE webhook_id = ?'),
    setDevices: db.prepare('UPDATE wh_endpoints SET device_ids = ? WHERE webhook_id = ?'),
    // Enabling again starts a fresh count of failing days. A disable decided by delivery (endpoint-disable.ts) and not
    // yet back from the log is newer than any update applied before it: those leave the endpoint disabled.
    setEnabled: db.prepare('UPDATE wh_endpoints SET enabled = ?, failing_since = NULL WHERE webhook_id = ? AND disable_pending IS NULL'),
    // The disable itself, back from the log: what delivery decided is now the log's word.
    setDisabled: db.prepare('UPDATE wh_endpoints SET enabled = 0, failing_since = NULL, disable_pending = NULL WHERE webhook_id = ?'),
    rotate: db.prepare('UPDATE wh_endpoints SET previous_secret = secret, secret = ?, previous_valid_until = ? WHERE webhook_id = ?'),
    deleteEndpoint: db.prepare('UPDATE wh_endpoints SET deleted = 1, enabled = 0 WHERE webhook_id = ?'),
    cancelPending: db.prepare(`UPDATE wh_deliveries SET state = 'cancelled', next_attempt_at = NULL WHERE webhook_id = ? AND next_attempt_at IS NOT NULL`),
    redeliver: db.prepare(
      `UPDATE wh_deliveries SET state = 'pending', next_attempt_at = 0
       WHERE delivery_id = ? AND webhook_id = ? AND customer_id = ? AND next_attempt_at IS NULL
       RETURNING webhook_id, device_id, customer_id`,
    ),
    keepLatestAttempt: db.prepare(
      `INSERT OR IGNORE INTO wh_attempts (delivery_id, attempt, at, status, error, latency_ms, response_start)
       SELECT delivery_id, attempts, last_attempt_at, last_status, last_error, last_latency_ms, last_response_start FROM wh_deliveries
       WHERE delivery_id = ? AND webhook_id = ? AND customer_id = ? AND next_attempt_at IS NULL AND attempts > 0`,
    ),
    insertReplay: db.prepare(
      'INSERT OR IGNORE INTO wh_replays (replay_id, webhook_id, customer_id, from_ms, to_ms, events, up_to, requested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    device: db.prepare('SELECT row FROM wh_devices WHERE device_id = ?'),
    upsertDevice: db.prepare('INSERT INTO wh_devices (device_id, row) VALUES (?, ?) ON CONFLICT (device_id) DO UPDATE SET row = excluded.row'),
    insertDelivery: db.prepare(
      `INSERT INTO wh_deliveries (delivery_id, webhook_id, customer_id, device_id, event_id, kind, occurred_at, body, created_at, replay_id,
         state, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0)`,
    ),
  };
}
