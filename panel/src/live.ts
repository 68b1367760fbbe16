/**
 * The live stream, GET /v1/stream (server-sent events with the session
 * cookie): `position`, `event` and `command` messages, `gap` when a resume was cut
 * short. One EventSource for the whole app; pages subscribe while shown.
 * EventSource reconnects by itself with Last-Event-ID, so nothing is missed.
 */
import type { FleetEvent, LiveCommand, LivePosition } from './api';

type Handlers = {
  position?: (p: LivePosition) => void;
  event?: (e: FleetEvent & { event: string; event_id: string }) => void;
  command?: (c: LiveCommand) => void;
  gap?: () => void;
};

const subscribers = new Set<Handlers>();
let source: EventSource | null = null;
let state: 'connecting' | 'open' | 'closed' = 'closed';
const stateListeners = new Set<(s: typeof state) => void>();

function setState(s: typeof state): void {
  state = s;
  for (const l of stateListeners) l(s);
}

export function startLive(): void {
  if (source) return;
  setState('connecting');
  source = new EventSource('/v1/stream', { withCredentials: true });
  source.onopen = () => setState('open');
  source.onerror = () => setState(source?.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
  source.addEventListener('position', (m) => {
    const p = JSON.parse((m as MessageEvent<string>).data) as LivePosition;
    for (const s of subscribers) s.position?.(p);
  });
  source.addEventListener('event', (m) => {
    const e = JSON.parse((m as MessageEvent<string>).data) as FleetEvent & { event: string; event_id: string };
    for (const s of subscribers) s.event?.({ ...e, id: e.event_id, kind: e.event });
  });
  source.addEventListener('command', (m) => {
    const c = JSON.parse((m as MessageEvent<string>).data) as LiveCommand;
    for (const s of subscribers) s.command?.(c);
  });
  source.addEventListener('gap', () => {
    for (const s of subscribers) s.gap?.();
  });
}

export function stopLive(): void {
  source?.close();
  source = null;
  setState('closed');
}

export function subscribe(handlers: Handlers): () => void {
  subscribers.add(handlers);
  return () => subscribers.delete(handlers);
}

export function onLiveState(listener: (s: typeof state) => void): () => void {
  stateListeners.add(listener);
  listener(state);
  return () => stateListeners.delete(listener);
}
