/**
 * Unique identifiers (an IMEI, a JT/T 808 terminal number, a driver's
 * external id) are claimed in a stream of their own with an expected
 * revision, so two API nodes can never hand one out twice. The last event of
 * the stream says who holds it. The store has no transaction across streams:
 * a command takes its claims first, releases them if a later one is refused,
 * and writes the owner's creation event last. A claim whose owner was never
 * created (the process died in between) is stale after `STALE_CLAIM_MS` and
 * may be taken over, so nothing stays held by an owner that does not exist.
 */
import type { Clock } from '../clock.js';
import type { EventStore, EventToAppend, ExpectedRevision, RecordedEvent } from '../event-store/port.js';
import { WrongExpectedRevisionError } from '../event-store/port.js';

/** Longer than any registration takes between its claims and its creation event. */
export const STALE_CLAIM_MS = 60_000;

export interface Claim {
  stream: string;
  /** The revision of the claim event, for a release that must not undo someone else's later claim. */
  revision: bigint;
}

export interface ClaimRequest {
  stream: string;
  event: EventToAppend;
  /** The owner a recorded claim event names; null for events that are not a live claim (a release). */
  ownerOf(event: RecordedEvent): { ownerStream: string; claimedAt: number } | null;
}

/**
 * Takes the claim, or returns null when a live owner holds it. A lost race
 * (another node appended first) is reported as held, like any other owner.
 */
export async function takeClaim(store: EventStore, clock: Clock, request: ClaimRequest): Promise<Claim | null> {
  const [last] = await store.readStream(request.stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
  let expectedRevision: ExpectedRevision = 'no_stream';
  if (last) {
    const owner = request.ownerOf(last);
    if (owner && !(await isStale(store, clock, owner))) return null;
    expectedRevision = last.revision;
  }
  try {
    const result = await store.appendToStream(request.stream, [request.event], { expectedRevision });
    return { stream: request.stream, revision: result.nextExpectedRevision };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return null;
    throw err;
  }
}

/** Gives a claim back unless someone took it over since (then it is theirs to keep). */
export async function releaseClaim(store: EventStore, claim: Claim, event: EventToAppend): Promise<void> {
  try {
    await store.appendToStream(claim.stream, [event], { expectedRevision: claim.revision });
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
  }
}

/** A claim is stale when its owner's stream is still empty long after the claim. */
async function isStale(store: EventStore, clock: Clock, owner: { ownerStream: string; claimedAt: number }): Promise<boolean> {
  if (clock.now() - owner.claimedAt < STALE_CLAIM_MS) return false;
  return (await store.readStream(owner.ownerStream, { maxCount: 1 })).length === 0;
}
