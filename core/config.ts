/**
 * Configuration comes from the environment (documented in the README). One
 * pure function turns an env object into a typed, validated config.
 */
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';

export type Role = 'gateway' | 'projections' | 'api' | 'webhooks';
export const ALL_ROLES: readonly Role[] = ['gateway', 'projections', 'api', 'webhooks'];

export interface Config {
  /** `sqlite:PATH` (default under the data dir) or `esdb://...`. */
  store: string;
  dataDir: string;
  httpHost: string;
  httpPort: number;
  /** The base URL clients reach the API at: the OpenAPI document's server and OAuth token URL. No trailing slash. */
  publicUrl: string;
  gatewayHost: string;
  teltonikaPort: number;
  gt06Port: number;
  jt808Port: number;
  /** A device silent this long is marked offline and its connection closed. */
  offlineAfterS: number;
  /** A connection that has not logged in this long after it was accepted is closed, however much it sends. */
  loginTimeoutS: number;
  /** The first wait for a unit's answer to a device command (JT/T 808 grows it per retransmission). */
  commandReplyTimeoutS: number;
  /** Open connections per listener (protocol port). */
  maxConnections: number;
  /**
   * Open device connections over all listeners; null derives it from the process's
   * open-file limit (gateway/connection-limits.ts), and a value above that is lowered.
   */
  maxTotalConnections: number | null;
  /** Open device connections from one remote address (trackers behind one carrier NAT share an address). */
  maxConnectionsPerAddress: number;
  /** Frames queued per connection before the socket is paused (backpressure). */
  maxQueuedFrames: number;
  logLevel: string;
  /** Allow webhook URLs on private/loopback addresses and plain http (development and tests only). */
  allowPrivateWebhookUrls: boolean;
  /**
   * FLEET_TRUST_PROXY: the addresses (or CIDR ranges) of the reverse proxies in front of the API,
   * whose X-Forwarded-For names the client; empty: the peer's address is the client's.
   */
  trustProxy: string[];
  /**
   * Where the key that encrypts webhook secrets comes from: `FLEET_SECRET_KEY`
   * (base64 of 32 bytes) or a key file, by default `<data dir>.key` beside
   * (not inside) the data directory, created on first start.
   */
  secretKey: { base64: string } | { file: string };
  /** Webhook deliveries a second for Enterprise customers (Free and Pro have fixed plan limits). */
  webhookEnterprisePerS: number;
  /** The endpoints this node delivers when several nodes run the webhooks role on EventStoreDB: `k/n`. */
  webhookShard: { index: number; count: number };
  /**
   * The customer panel's online map tiles (`https://tile.example/{z}/{x}/{y}.png`,
   * Leaflet placeholders allowed) and their attribution; null: the panel shows
   * only its bundled offline outline.
   */
  panelTileUrl: string | null;
  panelTileAttribution: string | null;
}

export class ConfigError extends Error {}

export const DEFAULT_HTTP_PORT = 3000;

/** Where a client on this machine reaches an API listening on `port`. */
export function defaultPublicUrl(port: number): string {
  return `http://localhost:${port}`;
}

/** An absolute http(s) base URL without query, fragment or credentials; the trailing slash dropped so paths append cleanly. */
function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL such as https://api.example.com (got ${JSON.stringify(raw)})`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${name} must be an http(s) URL without query, fragment or credentials (got ${JSON.stringify(raw)})`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = 65535 * 1000): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got ${JSON.stringify(raw)})`);
  }
  return n;
}

function webhookShard(raw: string | undefined, store: string): { index: number; count: number } {
  if (raw === undefined || raw === '') return { index: 0, count: 1 };
  if (/^postgres(ql)?:\/\//.test(store)) {
    throw new ConfigError('FLEET_WEBHOOK_SHARD is for EventStoreDB: nodes on PostgreSQL share delivery by themselves (leases); unset it');
  }
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index >= count) throw new ConfigError(`FLEET_WEBHOOK_SHARD must be k/n with 0 <= k < n, such as 0/2 (got ${JSON.stringify(raw)})`);
  return { index, count };
}

/** A tile URL template: http(s), placeholders such as `{s}`, `{z}` allowed, no credentials. */
function tileUrl(env: NodeJS.ProcessEnv): string | null {
  const raw = env.FLEET_PANEL_TILE_URL;
  if (raw === undefined || raw === '') return null;
  let url: URL | null = null;
  try {
    url = new URL(raw.replace(/\{[a-z0-9]+\}/gi, 'x'));
  } catch {
    // Refused below.
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password) {
    throw new ConfigError(`FLEET_PANEL_TILE_URL must be an http(s) tile URL such as https://tile.example.org/{z}/{x}/{y}.png (got ${JSON.stringify(raw)})`);
  }
  return raw;
}

/** A comma list of IP addresses or CIDR ranges; `true` is refused: any client could then name its own address. */
function proxies(raw: string | undefined): string[] {
  const list = (raw ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const entry of list) {
    const [address, bits, extra] = entry.split('/');
    if (extra !== undefined || isIP(address ?? '') === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
      throw new ConfigError(`FLEET_TRUST_PROXY must list the proxies' IP addresses or CIDR ranges, comma-separated (got ${JSON.stringify(entry)})`);
    }
  }
  return list;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false (got ${JSON.stringify(env[name])})`);
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  return int(env, name, fallback, 0, 65535);
}

/** The event stores FLEET_STORE may name (core/event-store/open.ts opens each). */
const STORE_SCHEMES = ['sqlite:', 'postgres://', 'postgresql://', 'esdb://', 'esdb+discover://'];

/** FLEET_STORE as it may be printed or logged: a password in the URL is masked. */
export function storeForDisplay(store: string): string {
  return store.replace(/^([a-z+]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

/** Where the embedded store keeps its log in a data dir, unless FLEET_STORE names another. */
export function defaultLogPath(dataDir: string): string {
  return join(dataDir, 'events.sqlite');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.FLEET_DATA_DIR || './data');
  const store = env.FLEET_STORE || `sqlite:${defaultLogPath(dataDir)}`;
  if (!STORE_SCHEMES.some((scheme) => store.startsWith(scheme))) {
    throw new ConfigError(`FLEET_STORE must be sqlite:PATH, postgres://... or esdb://... (got ${JSON.stringify(storeForDisplay(store))})`);
  }
  const httpPort = port(env, 'FLEET_HTTP_PORT', DEFAULT_HTTP_PORT);
  return {
    store,
    dataDir,
    httpHost: env.FLEET_HTTP_HOST || '0.0.0.0',
    httpPort,
    publicUrl: baseUrl(env, 'FLEET_PUBLIC_URL', defaultPublicUrl(httpPort)),
    gatewayHost: env.FLEET_GATEWAY_HOST || '0.0.0.0',
    teltonikaPort: port(env, 'FLEET_TELTONIKA_PORT', 5027),
    gt06Port: port(env, 'FLEET_GT06_PORT', 5023),
    jt808Port: port(env, 'FLEET_JT808_PORT', 5015),
    offlineAfterS: int(env, 'FLEET_OFFLINE_AFTER_S', 600, 1, 86_400),
    loginTimeoutS: int(env, 'FLEET_LOGIN_TIMEOUT_S', 60, 1, 3600),
    commandReplyTimeoutS: int(env, 'FLEET_COMMAND_REPLY_TIMEOUT_S', 30, 1, 3600),
    maxConnections: int(env, 'FLEET_MAX_CONNECTIONS', 20_000, 1, 1_000_000),
    maxTotalConnections: env.FLEET_MAX_TOTAL_CONNECTIONS ? int(env, 'FLEET_MAX_TOTAL_CONNECTIONS', 0, 1, 1_000_000) : null,
    maxConnectionsPerAddress: int(env, 'FLEET_MAX_CONNECTIONS_PER_ADDRESS', 1000, 1, 1_000_000),
    maxQueuedFrames: int(env, 'FLEET_MAX_QUEUED_FRAMES', 256, 1, 100_000),
    logLevel: env.FLEET_LOG_LEVEL || 'info',
    allowPrivateWebhookUrls: flag(env, 'FLEET_WEBHOOK_ALLOW_PRIVATE'),
    trustProxy: proxies(env.FLEET_TRUST_PROXY),
    webhookEnterprisePerS: int(env, 'FLEET_WEBHOOK_ENTERPRISE_PER_S', 1000, 1, 100_000),
    webhookShard: webhookShard(env.FLEET_WEBHOOK_SHARD, store),
    panelTileUrl: tileUrl(env),
    panelTileAttribution: env.FLEET_PANEL_TILE_ATTRIBUTION || null,
    secretKey: env.FLEET_SECRET_KEY ? { base64: env.FLEET_SECRET_KEY } : { file: resolve(env.FLEET_SECRET_KEY_FILE || `${dataDir}.key`) },
  };
}
