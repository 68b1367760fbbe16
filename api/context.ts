/** What routes need from the rest of the system, injected by api/app.ts. */
import type Database from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../core/clock.js';
import { DEFAULT_HTTP_PORT, defaultPublicUrl } from '../core/config.js';
import type { EventStore, LogPosition, RecordedEvent } from '../core/event-store/port.js';
import type { Coordination } from '../core/coordination/port.js';
import type { GatewayReading } from '../core/gateway-counters.js';
import type { Plan } from '../core/events.js';
import type { SecretBox } from '../core/secret-box.js';
import type { StoreWriteStatus } from '../core/event-store/write-health.js';
import { STREAMS_PER_CREDENTIAL, STREAMS_PER_CUSTOMER, type StreamCapLimits } from './stream-caps.js';
import type { ProjectionLag } from '../projections/lag.js';
import type { WebhookDeliveryAccess } from '../webhook-delivery/index.js';

export interface ApiContext {
  store: EventStore;
  clock: Clock;
  /** The read models' database (projections keep it current); queries live in api/queries/. */
  readModelDb: Database.Database;
  /** The position history's database file (projections/history keeps it); its pages are read in a thread of their own (api/history-pages.ts). */
  historyDbPath: string;
  /** Seals and opens webhook secrets; loaded once by the composition root from FLEET_SECRET_KEY or the key file. */
  secretBox: SecretBox;
  /** Resolves once the read models include the event at `position` (read-your-writes after a command). */
  waitFor(position: LogPosition): Promise<void>;
  catchUp(): Promise<void>;
  /** The projection runners as the API sees them (live stream, readiness, metrics). */
  projections: ProjectionsView;
  /** Webhook delivery, when this process runs the webhooks role (deliveries, test sends); null elsewhere. */
  webhookDelivery?: WebhookDeliveryAccess | null;
  /** Counters of the other roles running in this process, for /metrics; absent when they run elsewhere. */
  metrics?: MetricsSources;
  /** Whether the event store writes (core/event-store/write-health.ts): /readyz fails while it cannot. */
  storeWrites?: () => StoreWriteStatus;
  /** What API nodes sharing a PostgreSQL share (the plan buckets); null or absent on one machine. */
  coordination?: Coordination | null;
  settings?: Partial<ApiSettings>;
}

export interface ProjectionsView {
  /** The last log position the read models (the history aside) include: the live stream's boundary. */
  position(): LogPosition | null;
  /** `listener` gets every committed batch, after the read models include it; returns the unsubscribe function. */
  onApplied(listener: (events: readonly RecordedEvent[]) => void): () => void;
  /** How far the furthest behind of the read models, the history included, is behind the log. */
  lag(): Promise<ProjectionLag>;
}

export interface MetricsSources {
  /** The gateway's counters; null until it has started (it starts after the API listens): nothing to report yet. */
  gateway?: () => GatewayReading | null;
  /** `failuresByCode`: the failures the store could not write (SQLITE_FULL, ...), by code. */
  storeAppends?: () => { appends: number; events: number; failures: number; failuresByCode?: Record<string, number> };
  storeWrites?: () => StoreWriteStatus;
}

/** A token bucket: `burst` requests at once, refilled at `perMinute` spread evenly. */
export interface RateLimit {
  perMinute: number;
  burst: number;
}

export interface ApiSettings {
  /** Per-plan defaults (api/plugins/rate-limit.ts) and per-tenant overrides (enterprise agreements). */
  /** Limits per plan, where they differ from the plan defaults (docs/api-decisions.md, Rate limits) (a customer's own agreement is an event: CustomerRateLimitSet). */
  rateLimits: { plans?: Partial<Record<Plan, RateLimit>> };
  /** How often API key `last_used_at` values are flushed to the store. */
  keyUsageFlushMs: number;
  /** Interval of SSE keep-alive comments on /v1/stream. */
  streamKeepAliveMs: number;
  /** Live streams open at once per credential and per customer (api/stream-caps.ts). */
  streamCaps: StreamCapLimits;
  /** /readyz fails when the oldest event the read models lack is older than this. */
  readyMaxLagS: number;
  /** The base URL clients reach the API at (FLEET_PUBLIC_URL): the OpenAPI document's server and OAuth token URL. */
  publicUrl: string;
  /** FLEET_WEBHOOK_ALLOW_PRIVATE: webhook URLs may be plain http and reach private or loopback addresses (local development, tests). */
  allowPrivateWebhookUrls: boolean;
  /** FLEET_TRUST_PROXY: proxies whose X-Forwarded-For gives the client's address (login and token limits key on it). */
  trustProxy: string[];
  /** The customer panel's build (index.html, assets/), served at `/`; missing: `/` answers 503 until it is built. */
  panelDir: string;
  /** FLEET_PANEL_TILE_URL and FLEET_PANEL_TILE_ATTRIBUTION, for GET /panel-config.json and the panel's CSP. */
  panelTileUrl: string | null;
  panelTileAttribution: string | null;
}

/**
 * dist/panel, from the compiled API (dist/api/) and from its TypeScript
 * sources (tests), like the SQLite writer worker: the panel exists only built.
 */
export const DEFAULT_PANEL_DIR = fileURLToPath(
  import.meta.url.endsWith('.ts') ? new URL('../dist/panel/', import.meta.url) : new URL('../panel/', import.meta.url),
);

export const DEFAULT_SETTINGS: ApiSettings = {
  rateLimits: {},
  keyUsageFlushMs: 60_000,
  streamKeepAliveMs: 15_000,
  streamCaps: { perCredential: STREAMS_PER_CREDENTIAL, perCustomer: STREAMS_PER_CUSTOMER },
  readyMaxLagS: 30,
  publicUrl: defaultPublicUrl(DEFAULT_HTTP_PORT),
  allowPrivateWebhookUrls: false,
  trustProxy: [],
  panelDir: DEFAULT_PANEL_DIR,
  panelTileUrl: null,
  panelTileAttribution: null,
};

export function settingsOf(ctx: ApiContext): ApiSettings {
  return { ...DEFAULT_SETTINGS, ...ctx.settings };
}
