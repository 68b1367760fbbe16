/**
 * Pages of position history, read in a thread of their own (history-pages-thread-entry.ts)
 * on a read-only connection of its own. A page's SQLite read is about half of what a
 * history request costs the thread that serves HTTP; read beside it, it no longer holds
 * the API's thread (under `fleet start` also the read models'), and on two cores the
 * API answers more pages per second (docs/performance.md; see docs/architecture.md, The
 * position history).
 *
 * The thread starts with the first page asked for: a process that never serves one has
 * no such thread. It answers in the order it was asked, so waiting callers are a queue.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../core/role-thread.js';
import type { HistoryPage, HistoryPageQuery } from './queries/positions.js';

const ENTRY = threadEntry(import.meta.url, 'history-pages-thread-entry');

/** What the thread posts back per page: the items' bytes arrive as a Uint8Array (transferred when they can be). */
export type HistoryPageReply = { items: Uint8Array | null; next: HistoryPage['next'] } | { error: string };

interface Waiting {
  resolve: (page: HistoryPage) => void;
  reject: (err: Error) => void;
}

export class HistoryPages {
  private worker: Worker | null = null;
  private readonly waiting: Waiting[] = [];
  private closed = false;

  /** `path`: the history's database (projections/history), which must exist by the first page. */
  constructor(private readonly path: string) {}

  read(query: HistoryPageQuery): Promise<HistoryPage> {
    if (this.closed) return Promise.reject(new Error('history pages are closed'));
    const worker = this.worker ?? this.start();
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      worker.postMessage(query);
    });
  }

  /** Answers the pages already asked for, then stops the thread. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = once(worker, 'exit');
    worker.postMessage('close');
    await exited;
  }

  private start(): Worker {
    const worker = new Worker(ENTRY, { workerData: { path: this.path } });
    // Never what keeps the process alive: a caller waiting for a page is an HTTP request, which does.
    worker.unref();
    worker.on('message', (reply: HistoryPageReply) => {
      const caller = this.waiting.shift();
      if (!caller) return;
      if ('error' in reply) caller.reject(new Error(reply.error));
      else caller.resolve({ items: reply.items && Buffer.from(reply.items.buffer, reply.items.byteOffset, reply.items.byteLength), next: reply.next });
    });
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', (code) => this.lost(worker, new Error(`the history pages' thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  /** The thread is gone (a crash, or closed): its callers fail, and the next page starts another thread. */
  private lost(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const caller of this.waiting.splice(0)) caller.reject(err);
  }
}
