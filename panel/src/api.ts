/**
 * The panel's only way to the server: the public /v1 API with the session
 * cookie (same origin, `credentials: 'same-origin'`), the CSRF token on every
 * state-changing request, and problem+json answers turned into ApiProblem
 * (its `message` is what the user sees).
 */
import { EVENT_KINDS as ALL_EVENT_KINDS } from '../../core/alarms.js';
import { ALL_SCOPES } from '../../core/events.js';

export interface Page<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean };
}

export interface FieldError {
  pointer: string;
  message: string;
}

/** An error answer of the API (RFC 9457 problem details), or a network failure (status 0). */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiProblem';
  }
}

let csrfToken: string | null = null;
/** Called when the session ended (401 on a page that needs one): the app shows the login page. */
let onUnauthorized: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

async function problemOf(res: Response): Promise<ApiProblem> {
  let body: { code?: string; detail?: string; title?: string; errors?: FieldError[] } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // Not JSON (a proxy's error page): the status says enough.
  }
  const errors = Array.isArray(body.errors) ? body.errors : [];
  const detail = body.detail ?? body.title ?? `The server answered ${res.status}.`;
  const message = errors.length ? `${detail} ${errors.map((e) => `${e.pointer.replace(/^\/(body|query|params)\//, '')}: ${e.message}`).join('; ')}` : detail;
  return new ApiProblem(res.status, body.code ?? 'http_error', message, errors);
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}

export async function request<T>(method: string, path: string, body?: unknown, options: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch {
    throw new ApiProblem(0, 'network_error', 'The server could not be reached. Check the connection and try again.');
  }
  if (!res.ok) {
    const problem = await problemOf(res);
    if (res.status === 401 && !options.quiet401) onUnauthorized?.();
    throw problem;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const get = <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query));
export const post = <T>(path: string, body: unknown = {}) => request<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const del = (path: string) => request<void>('DELETE', path);

/** Every page of a list (the panel's lists are small: devices, geofences, drivers, keys). */
export async function all<T>(path: string, query: Query = {}, max = 2000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await get<Page<T>>(path, { ...query, limit: 200, cursor });
    items.push(...page.data);
    cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
  } while (cursor && items.length < max);
  return items;
}

// The shapes the panel reads (a subset of /v1/openapi.json).

export interface Session {
  user: { user_id: string; email: string; name: string; customer_id: string };
  customer: { customer_id: string; name: string; plan: string };
  csrf_token: string;
  expires_at: string;
}

export interface Fix {
  lat: number;
  lng: number;
  speed_kmh: number | null;
  heading_deg: number | null;
  timestamp: string;
}

export interface Device {
  id: string;
  imei: string;
  model: string;
  name: string | null;
  group_id: string | null;
  status: 'never_connected' | 'online' | 'offline';
  last_seen_at: string | null;
  latest_position: (Fix & { ignition: boolean | null }) | null;
  driver: { id: string; name: string } | null;
}

/** A device command (GET /v1/commands/{id}). */
export interface Command {
  id: string;
  device_id: string;
  type: string;
  params: Record<string, string | number>;
  status: 'queued' | 'sent' | 'acknowledged' | 'succeeded' | 'failed' | 'expired' | 'cancelled' | 'rejected';
  waiting_for: 'vehicle_stopped' | null;
  created_at: string;
  sent_at: string | null;
  acknowledged_at: string | null;
  completed_at: string | null;
  expires_at: string;
  response: { text: string | null; result_code: number | null; raw_hex: string } | null;
  error: string | null;
}

/** One entry of GET /v1/devices/{id}/command-types. */
export interface CommandTypeInfo {
  type: string;
  description: string;
  default_ttl_s: number;
  params: Array<{ name: string; kind: 'integer' | 'string' | 'hex' | 'enum'; required: boolean; minimum?: number; maximum?: number; min_length?: number; max_length?: number; values?: string[]; description: string }>;
  text?: string | null;
}

/** A `command` message of the live stream. */
export interface LiveCommand {
  event: string;
  device_id: string;
  command: Command;
}

export interface LivePosition extends Fix {
  device_id: string;
  device_name: string | null;
}

export interface FleetEvent {
  id: string;
  kind: string;
  severity: string;
  occurred_at: string;
  device_id: string;
  device_name: string | null;
  driver_id: string | null;
  source: string;
  position: Fix | null;
  [field: string]: unknown;
}

export interface TripEnd {
  time: string;
  lat: number;
  lng: number;
  odometer_km: number;
  engine_hours: number;
}

export interface Trip {
  device_id: string;
  driver_id: string | null;
  start: TripEnd;
  end: TripEnd;
  distance_km: number;
  duration_s: number;
  max_speed_kmh: number;
  avg_speed_kmh: number;
  idle_s: number;
}

/** A stop or an idle: `end` is null while it lasts. */
export interface Span {
  device_id: string;
  start: string;
  end: string | null;
  duration_s: number;
  lat: number;
  lng: number;
}

export interface EventDetail extends FleetEvent {
  context: Record<string, unknown>;
  media: { type: string; url?: string; label?: string }[];
}

export interface Geofence {
  id: string;
  name: string;
  shape: 'polygon' | 'circle';
  geometry: { type: 'Polygon'; coordinates: number[][][] };
  center: { lat: number; lng: number } | null;
  radius_m: number | null;
  /** Seconds inside after which one `geofence.dwell` is raised per visit; null: none. */
  dwell_s: number | null;
  created_at: string;
}

export interface Driver {
  id: string;
  name: string;
  external_id: string | null;
  score: number | null;
  current_vehicle: { device_id: string; device_name: string | null } | null;
}

export interface DailyScore {
  date: string;
  score: number | null;
  distance_km: number;
  driving_s: number;
  breakdown: Record<string, { count: number; per_100km: number | null; points: number | null }>;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface OAuthClient {
  client_id: string;
  name: string;
  scopes: string[];
  created_at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  status: string;
  disabled_reason: string | null;
  disabled_detail: string | null;
  previous_secret_valid_until: string | null;
  created_at: string;
}

export interface Delivery {
  id: string;
  event: string;
  event_id: string;
  device_id: string;
  state: string;
  attempts: number;
  created_at: string;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  next_attempt_at: string | null;
}

export interface TestResult {
  delivered: boolean;
  status: number | null;
  latency_ms: number;
  error: string | null;
  response_body_start: string;
}

/** The API's scopes (read only: every `:read` one). The vocabulary has one home, core/, shared with the server. */
export const SCOPES = ALL_SCOPES;
export const READ_SCOPES = SCOPES.filter((s) => s.endsWith(':read'));

/** Every kind a webhook can subscribe to, and the kinds GET /v1/events lists (all but fixes, online/offline and commands). */
export const WEBHOOK_KINDS = ALL_EVENT_KINDS;
const NOT_EVENTS: ReadonlySet<string> = new Set(['position.updated', 'device.online', 'device.offline']);
export const EVENT_KINDS = ALL_EVENT_KINDS.filter((k) => !NOT_EVENTS.has(k) && !k.startsWith('command.'));
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
