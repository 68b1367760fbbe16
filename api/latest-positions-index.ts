/**
 * The latest position of every device, held in memory per customer and kept
 * current from the projection runner's committed batches.
 *
 * `GET /v1/positions/latest` is the endpoint integrations poll hardest, too
 * often to read and serialise a page of rows from SQLite per request
 * (docs/performance.md). Here a page is a slice of a sorted id array and each
 * item's JSON is serialised once per change. The rows come from the
 * latest-positions read model at start and then evolve with the same pure rule
 * the projection uses, in the same tick as the runner's commit, so the two
 * never disagree.
 */
import type Database from 'better-sqlite3';
import type { RecordedEvent } from '../core/event-store/port.js';
import { evolveDevice, evolveLatestPosition, type DeviceRow, type LatestPositionRow } from '../projections/index.js';

/** The devices table's columns as a JSON object (`'name', d.name, …`): the whole row, as evolveDevice takes it. */
const DEVICE_COLUMNS = [
  'device_id', 'customer_id', 'imei', 'model', 'name', 'group_id', 'driver_id', 'terminal_id', 'speed_limit_kmh',
  'status', 'protocol', 'connection_id', 'last_seen_at', 'created_at', 'updated_at',
].map((c) => `'${c}', d.${c}`).join(', ');
import { fixBody, type LatestPosition } from './schemas/positions.js';
import { sensorAttributes } from './sensor-attributes.js';
import type { Static } from '@sinclair/typebox';

type Item = Static<typeof LatestPosition>;

interface DeviceEntry {
  /** The device's row as the devices projection evolves it (null until its registration is seen). */
  device: DeviceRow | null;
  name: string | null;
  groupId: string | null;
  row: LatestPositionRow | null;
  /** The serialised item as UTF-8 bytes (copied into responses without re-encoding); null until asked for after a change. */
  json: Buffer | null;
}

interface CustomerFleet {
  devices: Map<string, DeviceEntry>;
  /** Ids of the devices that have a position, ascending. */
  positioned: string[];
  /** Their entries, in the same order: a page reads them without a lookup per item. */
  positionedEntries: DeviceEntry[];
}

export interface LatestPositionsFilter {
  /** Sorted, distinct. */
  deviceIds: string[] | null;
  groupId: string | null;
  afterId: string | null;
  limit: number;
}

export class LatestPositionsIndex {
  private readonly fleets = new Map<string, CustomerFleet>();

  private constructor(private readonly serializeItem: (item: Item) => string) {}

  /**
   * Loads the read model and follows `onApplied`. Call both in one tick (no
   * await between the runner's last commit and this) so no batch falls between.
   */
  static follow(
    db: Database.Database,
    onApplied: (listener: (events: readonly RecordedEvent[]) => void) => () => void,
    serializeItem: (item: Item) => string,
  ): { index: LatestPositionsIndex; stop: () => void } {
    const index = new LatestPositionsIndex(serializeItem);
    index.load(db);
    const stop = onApplied((events) => index.apply(events));
    return { index, stop };
  }

  private load(db: Database.Database): void {
    const rows = db
      .prepare(
        `SELECT d.device_id AS id, d.customer_id AS customer, json_object(${DEVICE_COLUMNS}) AS device, p.*
         FROM devices d LEFT JOIN latest_positions p ON p.device_id = d.device_id ORDER BY d.device_id`,
      )
      .all() as Array<{ id: string; customer: string; device: string } & Partial<StoredRow>>;
    for (const r of rows) {
      const fleet = this.fleet(r.customer);
      const row = r.fix_time === undefined || r.fix_time === null ? null : positionRow(r as StoredRow);
      const device = JSON.parse(r.device) as DeviceRow;
      const entry: DeviceEntry = { device, name: device.name, groupId: device.group_id, row, json: null };
      fleet.devices.set(r.id, entry);
      if (row) {
        fleet.positioned.push(r.id);
        fleet.positionedEntries.push(entry);
      }
    }
  }

  /** Applies a committed batch: registrations and edits (name, group) and positions. */
  apply(events: readonly RecordedEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'DeviceRegistered':
        case 'DeviceUpdated': {
          // The devices projection's own rule decides the name and group.
          const entry = this.entry(e.data.customer_id, e.data.device_id);
          const device = evolveDevice(entry.device, e);
          if (!device || device === entry.device) break;
          entry.device = device;
          entry.name = device.name;
          entry.groupId = device.group_id;
          entry.json = null;
          break;
        }
        case 'PositionRecorded': {
          const fleet = this.fleet(e.data.customer_id);
          const entry = this.entry(e.data.customer_id, e.data.device_id);
          const next = evolveLatestPosition(entry.row, e);
          if (next === entry.row) break;
          if (!entry.row) {
            const at = firstAfter(fleet.positioned, e.data.device_id);
            fleet.positioned.splice(at, 0, e.data.device_id);
            fleet.positionedEntries.splice(at, 0, entry);
          }
          entry.row = next;
          entry.json = null;
          break;
        }
        default:
          break;
      }
    }
  }

  /**
   * Up to `limit` serialised items of one customer in device id order after
   * `afterId`, the id of the last one, and whether more follow.
   */
  page(customerId: string, filter: LatestPositionsFilter): { items: Buffer[]; lastId: string | null; hasMore: boolean } {
    const items: Buffer[] = [];
    let lastId: string | null = null;
    const fleet = this.fleets.get(customerId);
    if (!fleet) return { items, lastId, hasMore: false };
    const { deviceIds } = filter;
    const candidates = deviceIds ?? fleet.positioned;
    for (let i = firstAfter(candidates, filter.afterId); i < candidates.length; i++) {
      const id = candidates[i]!;
      const entry = deviceIds ? fleet.devices.get(id) : fleet.positionedEntries[i];
      if (!entry?.row) continue;
      if (filter.groupId !== null && entry.groupId !== filter.groupId) continue;
      if (items.length === filter.limit) return { items, lastId, hasMore: true };
      entry.json ??= Buffer.from(this.serializeItem(toItem(id, entry, entry.row)));
      items.push(entry.json);
      lastId = id;
    }
    return { items, lastId, hasMore: false };
  }

  private fleet(customerId: string): CustomerFleet {
    let fleet = this.fleets.get(customerId);
    if (!fleet) {
      fleet = { devices: new Map(), positioned: [], positionedEntries: [] };
      this.fleets.set(customerId, fleet);
    }
    return fleet;
  }

  private entry(customerId: string, deviceId: string): DeviceEntry {
    const fleet = this.fleet(customerId);
    let entry = fleet.devices.get(deviceId);
    if (!entry) {
      entry = { device: null, name: null, groupId: null, row: null, json: null };
      fleet.devices.set(deviceId, entry);
    }
    return entry;
  }
}

/** A row as the table keeps it: the attributes as JSON text. */
type StoredRow = Omit<LatestPositionRow, 'attributes'> & { attributes: string };

function positionRow(r: StoredRow): LatestPositionRow {
  return {
    device_id: r.device_id,
    customer_id: r.customer_id,
    lat: r.lat,
    lng: r.lng,
    speed_kmh: r.speed_kmh,
    heading_deg: r.heading_deg,
    altitude_m: r.altitude_m,
    satellites: r.satellites,
    ignition: r.ignition,
    fix_time: r.fix_time,
    received_at: r.received_at,
    odometer_m: r.odometer_m,
    attributes: JSON.parse(r.attributes) as LatestPositionRow['attributes'],
  };
}

function toItem(deviceId: string, entry: DeviceEntry, p: LatestPositionRow): Item {
  return {
    device_id: deviceId,
    device_name: entry.name,
    ...fixBody(p),
    attributes: sensorAttributes({ ignition: p.ignition === null ? null : p.ignition === 1, odometer_m: p.odometer_m, attributes: p.attributes }),
  };
}

/** Index of the first id greater than `afterId` (binary search). */
function firstAfter(sorted: readonly string[], afterId: string | null): number {
  if (afterId === null) return 0;
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= afterId) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
