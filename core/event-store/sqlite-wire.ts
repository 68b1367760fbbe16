/**
 * What the SQLite store's two threads exchange, packed flat: a batch of appends
 * travels as one string and the outcomes as one Float64Array, because copying one
 * flat value between threads costs far less than cloning hundreds of small objects.
 */

/** One appendToStream call, as the writer receives it. */
export interface WireAppend {
  stream: string;
  /** 'any' | 'no_stream' | 'stream_exists', or an exact revision as a decimal string. */
  expected: string;
  events: Array<{ id: string; type: string; data: string; metadata: string }>;
  created: number;
}

export type WireOutcome =
  | { ok: true; revision: number; position: number }
  /** The expected revision did not hold; `current` is -1 for no stream. */
  | { ok: false; current: number };

// JSON text never holds raw control characters (JSON.stringify escapes them), so these
// separate fields and appends unambiguously; names and ids are checked for them.
const FIELD = '\u001f';
const APPEND = '\u001e';
const holdsSeparator = (text: string): boolean => text.includes(FIELD) || text.includes(APPEND);

/** What an append carries of each event: its data and metadata become JSON text in the batch. */
export interface EventForBatch {
  id: string;
  type: string;
  data: unknown;
  metadata?: unknown;
}

/**
 * A batch's text for the writer, built as each append is made and joined once when posted
 * (`take`). An append its text cannot carry fails on its own, when it is made; the appends
 * made beside it are posted as usual. (Encoded when posted, it failed the post, in a timer,
 * with every append of the batch.) No object per append or event outlives the call, so the
 * gateway's thread allocates less (docs/performance.md).
 */
export class BatchText {
  private pieces: string[] = [];

  /**
   * Adds one append (the events' data as JSON text, metadata `{}` when there is none). Throws, and
   * adds nothing, for a name or id that holds a separator or data that is not JSON.
   */
  add(stream: string, expected: string, created: number, events: readonly EventForBatch[]): void {
    if (holdsSeparator(stream)) throw new Error(`stream name holds a control character: ${JSON.stringify(stream)}`);
    const pieces = this.pieces;
    const before = pieces.length;
    try {
      if (before > 0) pieces.push(APPEND);
      pieces.push(stream, FIELD, expected, FIELD, String(created), FIELD, String(events.length));
      for (const e of events) {
        if (holdsSeparator(e.id) || holdsSeparator(e.type)) throw new Error(`event id or type holds a control character: ${JSON.stringify(e.id)}`);
        const data = JSON.stringify(e.data);
        if (typeof data !== 'string') throw new Error(`event ${e.id} has no JSON data`);
        pieces.push(FIELD, e.id, FIELD, e.type, FIELD, e.metadata ? JSON.stringify(e.metadata) : '{}', FIELD, data);
      }
    } catch (err) {
      pieces.length = before;
      throw err;
    }
  }

  /** The batch's text (what decodeBatch reads), leaving this empty for the next one. */
  take(): string {
    const text = this.pieces.join('');
    this.pieces = [];
    return text;
  }

  /** Drops what was added (appends that will never be posted). */
  clear(): void {
    this.pieces = [];
  }
}

/**
 * A copy of a string that shares no memory with the text it was cut from. V8 keeps a
 * slice's whole parent alive, and `split` cuts slices: the writer keeps every stream's name
 * as a map key for as long as it runs (its revision, its id), which kept alive the text of
 * the batch that first wrote each stream.
 */
const ownCopy = (slice: string): string => Buffer.from(slice, 'utf8').toString('utf8');

/** The events' fields are slices of `text` (they only live as long as the batch); the stream names are copies of their own. */
export function decodeBatch(text: string): WireAppend[] {
  const appends: WireAppend[] = [];
  for (const chunk of text.split(APPEND)) {
    const f = chunk.split(FIELD);
    const count = Number(f[3]);
    const events: WireAppend['events'] = [];
    for (let i = 0, at = 4; i < count; i++, at += 4) {
      events.push({ id: f[at]!, type: f[at + 1]!, metadata: f[at + 2]!, data: f[at + 3]! });
    }
    appends.push({ stream: ownCopy(f[0]!), expected: f[1]!, created: Number(f[2]), events });
  }
  return appends;
}

/** Two numbers per outcome: [revision, position], or [current, NaN] when the expected revision failed. */
export function encodeOutcomes(outcomes: readonly WireOutcome[]): Float64Array {
  const out = new Float64Array(outcomes.length * 2);
  outcomes.forEach((o, i) => {
    out[2 * i] = o.ok ? o.revision : o.current;
    out[2 * i + 1] = o.ok ? o.position : NaN;
  });
  return out;
}

export function outcomeAt(packed: Float64Array, i: number): WireOutcome {
  const position = packed[2 * i + 1]!;
  return Number.isNaN(position)
    ? { ok: false, current: packed[2 * i]! }
    : { ok: true, revision: packed[2 * i]!, position };
}
