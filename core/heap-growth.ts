/**
 * How far a thread's old generation may grow past what its last full collection kept before
 * the next one, once the platform is live. V8 picks 1.1 to 4 times per heap, from how fast it
 * collects, and a busy thread that collects fast goes to the top: with 15,000 devices sending,
 * the platform's thread kept about 70 MB after a full collection and grew to 340 MB before the
 * next. That room pays during a catch-up (a rebuild ran 5-15% slower with growth capped by
 * half), so the cap starts once the platform has started, its read models caught up.
 */
import { setFlagsFromString } from 'node:v8';

const HEAP_GROWING_PERCENT = 50;

/** The flag holds for every thread of the process; V8 reads it whenever a full collection sets the next limit. */
export function limitHeapGrowthFromNowOn(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
