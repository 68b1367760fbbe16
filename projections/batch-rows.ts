/** Rows (or lookups) kept between batches, per BatchRows or BatchLookup: a fleet of 50,000 devices' detector states is tens of MB. */
const KEPT_ROWS_MAX = 50_000;

/**
 * Rows a projection reads and rewrites many times (a device's detector state,
 * its geofence presence), kept in memory: each is read from its table once,
 * and written once per batch that changed it, at the batch's end (`flush`,
 * inside the runner's transaction, before the checkpoint moves).
 *
 * They stay in memory after the batch, so the next batch does not read them
 * back: the runner is the only writer of its read models, and every write to
 * one of these tables goes through its BatchRows (`set`) or is told to it
 * (`keep`), so what is kept is what the table holds. A batch that rolled back
 * drops them all (`discard`), and they are read again. With a thousand
 * devices a batch of 4,000 events holds only about four of each device's, so
 * rows read afresh every batch made a replay slower (docs/performance.md).
 */
export class BatchRows<K, V> {
  private readonly rows = new Map<K, V | null>();
  private readonly dirty = new Set<K>();

  constructor(
    private readonly load: (key: K) => V | null,
    private readonly save: (key: K, value: V) => void,
  ) {}

  /** The row as the batch has it so far (null: none). */
  get(key: K): V | null {
    const kept = this.rows.get(key);
    if (kept !== undefined) return kept;
    const loaded = this.load(key);
    this.rows.set(key, loaded);
    return loaded;
  }

  /** The row's new value, written at the batch's end. */
  set(key: K, value: V): void {
    this.rows.set(key, value);
    this.dirty.add(key);
  }

  /** The row's new value, which the caller has just written itself: nothing left to write. */
  keep(key: K, value: V): void {
    this.rows.set(key, value);
    this.dirty.delete(key);
  }

  flush(): void {
    for (const key of this.dirty) this.save(key, this.rows.get(key)!);
    this.dirty.clear();
    // A bound on memory: past it, rows are read again as they are needed.
    if (this.rows.size > KEPT_ROWS_MAX) this.rows.clear();
  }

  discard(): void {
    this.rows.clear();
    this.dirty.clear();
  }
}

/**
 * A per-device lookup of the devices and customers read models (driver, speed
 * limit), remembered until an event may have changed it. Only the high-volume
 * telemetry events below are known to change neither table's driver or limit:
 * any other event forgets what was remembered (`seen`), so a DeviceUpdated in
 * the middle of a batch is seen by the very next fix. What is
 * remembered outlives the batch, as BatchRows' rows do (the runner is the only
 * writer of these tables, and every event passes `seen` before a lookup); a
 * batch that rolled back forgets it all (`discard`).
 */
const KEEPS_DEVICE_LOOKUPS: ReadonlySet<string> = new Set([
  'PositionRecorded',
  'AlarmReported',
  'StatusReported',
  'DeviceConnected',
  'DeviceDisconnected',
  'DeviceEventRaised',
]);

export class BatchLookup<V> {
  private readonly memo = new Map<string, V>();

  constructor(private readonly lookup: (deviceId: string) => V) {}

  get(deviceId: string): V {
    if (this.memo.has(deviceId)) return this.memo.get(deviceId)!;
    const value = this.lookup(deviceId);
    this.memo.set(deviceId, value);
    return value;
  }

  /** Called with every event before the lookup is used for it. */
  seen(type: string): void {
    if (this.memo.size > 0 && !KEEPS_DEVICE_LOOKUPS.has(type)) this.memo.clear();
  }

  /** Forgets one device's value (its table changed). */
  forget(deviceId: string): void {
    this.memo.delete(deviceId);
  }

  /** The batch committed: what is remembered still holds (up to KEPT_ROWS_MAX devices). */
  flush(): void {
    if (this.memo.size > KEPT_ROWS_MAX) this.memo.clear();
  }

  /** The batch rolled back: what it looked up may be gone. */
  discard(): void {
    this.memo.clear();
  }
}
