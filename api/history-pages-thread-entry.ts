/** The history pages' thread (history-pages.ts): reads each page asked for, in order, on a read-only connection. */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { nameThisThread } from '../core/thread-name.js';
import type { HistoryPageReply } from './history-pages.js';
import { historyPage, type HistoryPageQuery } from './queries/positions.js';

nameThisThread('history-pages');
const { path } = workerData as { path: string };
const port = parentPort!;
/** Opened by the first page: a database that cannot be opened yet fails that page only, and the next tries again. */
let db: Database.Database | null = null;

port.on('message', (message: HistoryPageQuery | 'close') => {
  if (message === 'close') {
    db?.close();
    port.close();
    return;
  }
  try {
    db ??= new Database(path, { readonly: true, fileMustExist: true });
    const { items, next } = historyPage(db, message);
    const reply: HistoryPageReply = { items, next };
    // SQLite's blob comes back in a buffer of its own: handed over without a copy (a pooled one would be copied).
    const ownsBuffer = items !== null && items.byteOffset === 0 && items.byteLength === items.buffer.byteLength;
    port.postMessage(reply, ownsBuffer ? [items.buffer as ArrayBuffer] : []);
  } catch (err) {
    // A failed read fails its request only (a 500 with the API's problem body); the thread reads on.
    const reply: HistoryPageReply = { error: err instanceof Error ? err.message : String(err) };
    port.postMessage(reply);
  }
});
