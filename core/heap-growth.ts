/**
 * How far a thread's old generation may grow past what its last full collection kept before
 * the next one, once the platform is live: half. V8 picks 1.1 to 4 times per heap, from how fast
 * it collects, and a busy live thread that collects fast goes to the top, several times what it
 * keeps. That room pays during a catch-up, so the cap starts once the platform has started, its
 * read models caught up (docs/performance.md).
 */
import { setFlagsFromString } from 'node:v8';

const HEAP_GROWING_PERCENT = 50;

/** The flag holds for every thread of the process; V8 reads it whenever a full collection sets the next limit. */
export function limitHeapGrowthFromNowOn(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
