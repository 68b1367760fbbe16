/**
 * The SQLite log's stream index, kept up to date on a fresh log and on an aged one.
 *
 * Once a fleet has run for a while, each device's newest index entries sit on a leaf
 * page of their own, so every index step rewrites one leaf per stream it holds. The
 * ingest bench starts from an empty log and never gets there. This bench fills the
 * index as a fleet's first half hour would, then appends a tail as an open-loop fleet
 * sends it (frames of 5 records, one device after another) through the real log writer,
 * and times the steps of the log's upkeep thread (sqlite-log-upkeep.ts) over it, on a
 * connection set up as that thread's.
 *
 * The aged entries are placeholders: they point to positions before the tail, and a
 * step's cost does not depend on the events they point to. Reported per log: step time
 * p50 and max (another process's step waits that long; appends never do), and CPU and
 * bytes written to the index's WAL per event moved.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INDEX_STEP, openLogForUpkeep } from '../../core/event-store/sqlite-log-upkeep.js';
import { LogWriter } from '../../core/event-store/sqlite-log-writer.js';
import { INDEX_AT_OPEN_EVENTS, openLog, streamIndexPath } from '../../core/event-store/sqlite-schema.js';
import { StreamIndex } from '../../core/event-store/sqlite-stream-index.js';
import type { WireAppend } from '../../core/event-store/sqlite-wire.js';

const RECORDS_PER_FRAME = 5;
/** Frames committed together, as the writer's group commit takes them under load. */
const FRAMES_PER_COMMIT = 200;
/** The tail appended: up to ten steps, short of what the log's open would index in one pass. */
const TAIL = Math.min(10, Math.floor((INDEX_AT_OPEN_EVENTS - 1) / INDEX_STEP)) * INDEX_STEP;

export interface StreamIndexFigure {
  entriesPerStream: number;
  stepEvents: number;
  stepP50Ms: number;
  stepMaxMs: number;
  cpuUsPerEvent: number;
  walKbPerEvent: number;
}

/** Times `step` (which returns the events it moved) until it moves nothing more. */
function timeSteps(path: string, step: () => number): Omit<StreamIndexFigure, 'entriesPerStream'> {
  const walBefore = statSync(`${path}-wal`).size;
  const cpuBefore = process.cpuUsage();
  const times: number[] = [];
  const sizes: number[] = [];
  for (;;) {
    const started = performance.now();
    const events = step();
    if (events === 0) break;
    times.push(performance.now() - started);
    sizes.push(events);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const moved = sizes.reduce((a, b) => a + b, 0);
  const p50 = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return {
    stepEvents: p50(sizes),
    stepP50Ms: p50(times),
    stepMaxMs: Math.max(...times),
    cpuUsPerEvent: (cpu.user + cpu.system) / moved,
    walKbPerEvent: (statSync(`${path}-wal`).size - walBefore) / moved / 1024,
  };
}

function measure(streams: number, entriesPerStream: number): StreamIndexFigure {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-index-'));
  try {
    const path = join(dir, 'events.sqlite');
    const db = openLog(path);
    const aged = streams * entriesPerStream;
    db.transaction(() => {
      const stream = db.prepare('INSERT INTO streams (id, name) VALUES (?, ?)');
      const entry = db.prepare('INSERT INTO idx.stream_index (stream_id, revision, position) VALUES (?, ?, ?)');
      for (let s = 1; s <= streams; s++) stream.run(s, `telemetry-dev${s}`);
      let position = 0;
      for (let s = 1; s <= streams; s++) for (let r = 0; r < entriesPerStream; r++) entry.run(s, r, ++position);
      if (aged > 0) {
        // The aged part of the log in one row: the tail's positions continue after it.
        db.prepare("INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata, created) VALUES (?, 'aged', 1, -1, 'Aged', '{}', '{}', 0)").run(aged);
        db.prepare("UPDATE idx.index_state SET indexed_through = ?, through_event = 'aged'").run(aged);
      }
    })();
    db.pragma('main.wal_checkpoint(TRUNCATE)');
    db.pragma('idx.wal_checkpoint(TRUNCATE)');

    const writer = new LogWriter(db);
    const frames = TAIL / RECORDS_PER_FRAME;
    let next = 0;
    for (let f = 0; f < frames; f += FRAMES_PER_COMMIT) {
      const batch: WireAppend[] = [];
      for (let k = 0; k < FRAMES_PER_COMMIT; k++, next++) {
        const device = (next % streams) + 1;
        batch.push({
          stream: `telemetry-dev${device}`,
          expected: 'any',
          created: 0,
          events: Array.from({ length: RECORDS_PER_FRAME }, (_, i) => ({ id: `e${next}-${i}`, type: 'PositionRecorded', data: '{}', metadata: '{}' })),
        });
      }
      writer.writeBatch(batch);
    }

    const upkeep = openLogForUpkeep(path, { synchronous: 'FULL' });
    const index = new StreamIndex(upkeep);
    const figure = { entriesPerStream, ...timeSteps(streamIndexPath(path), () => index.flush(INDEX_STEP)) };
    upkeep.close();
    db.close();
    return figure;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function runStreamIndexBench(streams = 15_000, entriesPerStream = 1_500): StreamIndexFigure[] {
  process.stdout.write(
    `stream index: ${streams.toLocaleString('en')} streams, a tail of ${TAIL.toLocaleString('en')} events ` +
      `(frames of ${RECORDS_PER_FRAME}, one device after another), moved in steps of ${INDEX_STEP.toLocaleString('en')}\n`,
  );
  const figures: StreamIndexFigure[] = [];
  for (const entries of [0, entriesPerStream]) {
    const f = measure(streams, entries);
    const label = entries === 0 ? 'fresh log' : `aged log (${entries.toLocaleString('en')} entries per stream)`;
    process.stdout.write(
      `  ${label.padEnd(40)} step p50 ${f.stepP50Ms.toFixed(1)} ms, max ${f.stepMaxMs.toFixed(1)} ms; ` +
        `per event moved: ${f.cpuUsPerEvent.toFixed(2)} µs CPU, ${f.walKbPerEvent.toFixed(2)} KB of WAL\n`,
    );
    figures.push(f);
  }
  return figures;
}
