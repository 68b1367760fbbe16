/**
 * Unique identifiers (an IMEI, a JT/T 808 terminal number, a driver's
 * external id, a user's email) are claimed in a stream of their own with an
 * expected revision, so two API nodes can never hand one out twice. The last
 * event of the stream says who holds it. The store has no transaction across
 * streams: a command takes its claims first, releases them if a later one is
 * refused, and writes the owner's creation event last. A claim whose owner
 * was never created (the process died in between) is stale after
 * `STALE_CLAIM_MS` and may be taken over, so nothing stays held by an owner
 * that does not exist.
 */
import type { Clock } from '../clock.js';
import type { DomainEvent, DriverExternalIdClaimed, ImeiClaimed, TerminalClaimed, UserEmailClaimed } from '../events.js';
import type { EventStore } from '../event-store/port.js';
import { WrongExpectedRevisionError } from '../event-store/port.js';
import { streams } from '../streams.js';
import { type Aggregate, type NewEvent, handle, load } from './handler.js';

/** Longer than any registration takes between its claims and its creation event. */
export const STALE_CLAIM_MS = 60_000;

export type ClaimEvent = ImeiClaimed | TerminalClaimed | DriverExternalIdClaimed | UserEmailClaimed;

/** The owner a claim names: the stream its creation event goes to, and when it claimed. */
export interface ClaimHolder {
  ownerStream: string;
  claimedAt: number;
}

/** Nobody holds a claim stream that was never claimed or whose last event is a release. */
export interface ClaimState {
  holder: ClaimHolder | null;
}

/** A claim this command took, so it can give it back. */
export interface Claim {
  stream: string;
  ownerStream: string;
}

/** The holder a claim event names; null for events that are not a live claim (a release). */
export function holderOf(event: DomainEvent): ClaimHolder | null {
  switch (event.type) {
    case 'ImeiClaimed':
    case 'TerminalClaimed':
      return { ownerStream: streams.device(event.data.device_id), claimedAt: event.data.claimed_at };
    case 'DriverExternalIdClaimed':
      return { ownerStream: streams.driver(event.data.driver_id), claimedAt: event.data.claimed_at };
    case 'UserEmailClaimed':
      return { ownerStream: streams.user(event.data.user_id), claimedAt: event.data.claimed_at };
    default:
      return null;
  }
}

export const claimStream: Aggregate<ClaimState> = {
  initial: { holder: null },
  evolve: (_state, event) => ({ holder: holderOf(event) }),
};

/** Whether a holder's claim is old enough that its owner, if still not created, never will be. */
export function isOldClaim(holder: ClaimHolder, now: number): boolean {
  return now - holder.claimedAt >= STALE_CLAIM_MS;
}

/**
 * Takes the claim unless a live holder has it: one that claimed recently, or
 * whose owner exists (`holderCreated`, asked of the store only for an old claim).
 */
export function decideClaim(state: ClaimState, claim: ClaimEvent, now: number, holderCreated: boolean): NewEvent[] {
  const holder = state.holder;
  if (holder && (!isOldClaim(holder, now) || holderCreated)) return [];
  return [claim];
}

/** Gives a claim back unless someone took it over since (then it is theirs to keep). */
export function decideRelease(state: ClaimState, claim: Claim, release: NewEvent): NewEvent[] {
  return state.holder?.ownerStream === claim.ownerStream ? [release] : [];
}

/**
 * Takes the claim, or returns null when a live owner holds it. A lost race
 * (another node appended first) is reported as held, like any other owner:
 * the holder's existence was asked for the state read, so it is not decided again.
 */
export async function takeClaim(store: EventStore, clock: Clock, request: { stream: string; event: ClaimEvent }): Promise<Claim | null> {
  const loaded = await load(store, request.stream, claimStream);
  const now = clock.now();
  const holder = loaded.state.holder;
  const holderCreated = holder !== null && isOldClaim(holder, now) && (await store.readStream(holder.ownerStream, { maxCount: 1 })).length > 0;
  try {
    const handled = await handle(
      store,
      { stream: request.stream, aggregate: claimStream, decide: (state) => decideClaim(state, request.event, now, holderCreated) },
      { loaded, attempts: 1 },
    );
    return handled.events.length > 0 ? { stream: request.stream, ownerStream: holderOf(request.event)!.ownerStream } : null;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return null;
    throw err;
  }
}

export async function releaseClaim(store: EventStore, claim: Claim, release: NewEvent): Promise<void> {
  await handle(store, { stream: claim.stream, aggregate: claimStream, decide: (state) => decideRelease(state, claim, release) });
}
