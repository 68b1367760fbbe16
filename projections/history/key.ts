/**
 * The history's clustered key (one 63-bit integer, the table's rowid), which
 * orders a device's fixes by time:
 *
 *   device number (20 bits) | ms since 2000-01-01 (41 bits) | slot (2 bits)
 *
 * - A device's number is given by the history's database the first time one
 *   of its fixes arrives (the `history_devices` table): up to 1,048,575
 *   devices per history.
 * - Fix times before 2000 are implausible and never stored (usable-fix.ts);
 *   the key holds times up to 2069-09-06. A fix dated later (a clock decades
 *   wrong) stays in the log only.
 * - Fixes of one device in one millisecond take the slots in the order they
 *   are applied (the log's order, the same on every replay): up to four.
 *   A fifth stays in the log only.
 *
 * A key exceeds 2^53, so SQLite computes it from its parts (its integers
 * have 64 bits), for the writer's rows and a page's bounds alike; what is read
 * back is the fix time and the slot, which fit in a number.
 */

export const HISTORY_EPOCH_MS = Date.UTC(2000, 0, 1);
const TIME_BITS = 41;
const SLOT_BITS = 2;
/** The last fix time a key can hold (2069-09-06). */
export const HISTORY_LAST_FIX_MS = HISTORY_EPOCH_MS + 2 ** TIME_BITS - 1;
/** The most devices one history keys (device numbers start at 1). */
export const HISTORY_MAX_DEVICES = 2 ** 20 - 1;
/** Fixes of one device in one millisecond the history keeps. */
export const HISTORY_SLOTS = 2 ** SLOT_BITS;

/** SQL of the first key of a device's block: its number shifted past time and slot. */
export const deviceBaseSql = (num: string): string => `(${num} << ${TIME_BITS + SLOT_BITS})`;

/** SQL of the key of a fix: `base` is a deviceBaseSql, `time` a fix time in ms, `slot` 0 to 3. */
export const keySql = (base: string, time: string, slot = '0'): string => `(${base} + ((${time} - ${HISTORY_EPOCH_MS}) << ${SLOT_BITS}) + ${slot})`;

/** SQL of the fix time a key holds. */
export const keyFixTimeSql = (key: string): string => `(((${key} >> ${SLOT_BITS}) & ${2 ** TIME_BITS - 1}) + ${HISTORY_EPOCH_MS})`;

/** SQL of the slot a key holds. */
export const keySlotSql = (key: string): string => `(${key} & ${HISTORY_SLOTS - 1})`;

/** Whether a fix time fits in a key. */
export const isKeyableFixTime = (t: number): boolean => t >= HISTORY_EPOCH_MS && t <= HISTORY_LAST_FIX_MS;

/** SQL of the device number a key holds. */
export const keyDeviceNumberSql = (key: string): string => `(${key} >> ${TIME_BITS + SLOT_BITS})`;
