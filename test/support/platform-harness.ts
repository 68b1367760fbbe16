/**
 * The whole platform in this process (gateway, projections, API) on ephemeral
 * ports over a temporary data directory, with one customer and its API key:
 * for tests that drive devices over TCP and read the result over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import { ALL_ROLES, loadConfig } from '../../core/config.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { createCustomer } from '../../core/commands/customers.js';
import type { Plan } from '../../core/events.js';
import { startPlatform, type RunningPlatform } from '../../main.js';

export interface PlatformHarness {
  platform: RunningPlatform;
  dir: string;
  base: string;
  customerId: string;
  /** An authenticated JSON request as the customer. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }>;
  /** Another customer, with its own authenticated requests. */
  newCustomer(name: string, plan?: Plan): Promise<{ customerId: string; api: PlatformHarness['api'] }>;
  /** Registers a device through POST /v1/devices; resolves with its id. */
  registerDevice(body: { imei: string; model?: string; terminal_id?: string }): Promise<string>;
  close(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A JSON client of a platform's API with a bearer credential (a 204 answers `{}`). */
export type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: Json }>;

export function bearerApi(base: string, key: string): Api {
  return async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: res.status === 204 ? {} : ((await res.json()) as Json) };
  };
}

export async function startPlatformHarness(env: Record<string, string> = {}, log: Logger = silentLogger): Promise<PlatformHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-platform-'));
  const config = loadConfig({
    FLEET_DATA_DIR: dir,
    FLEET_SECRET_KEY: randomBytes(32).toString('base64'), // not a key file beside the temporary data dir, left behind in the temp directory
    FLEET_HTTP_PORT: '0',
    FLEET_TELTONIKA_PORT: '0',
    FLEET_GT06_PORT: '0',
    FLEET_JT808_PORT: '0',
    FLEET_HTTP_HOST: '127.0.0.1',
    FLEET_GATEWAY_HOST: '127.0.0.1',
    // Receivers in tests listen on 127.0.0.1.
    FLEET_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...env,
  });
  const platform = await startPlatform(config, ALL_ROLES, log);
  const base = `http://127.0.0.1:${platform.ports.http}`;
  const client = (apiKey: string): PlatformHarness['api'] => async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: res.status === 204 ? {} : ((await res.json()) as Json) };
  };
  const { api_key, customer_id } = await createCustomer(platform.store, systemClock, { name: 'Test Fleet', plan: 'pro' });
  const api = client(api_key);
  return {
    platform,
    dir,
    base,
    customerId: customer_id,
    api,
    async newCustomer(name, plan = 'pro') {
      const created = await createCustomer(platform.store, systemClock, { name, plan });
      return { customerId: created.customer_id, api: client(created.api_key) };
    },
    async registerDevice(body) {
      const res = await api('POST', '/v1/devices', { model: 'test-unit', ...body });
      if (res.status !== 201) throw new Error(`device registration failed: ${res.status} ${JSON.stringify(res.json)}`);
      return (res.json as { id: string }).id;
    },
    async close() {
      await platform.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A logger that keeps every line it writes, for tests that look at (or measure) the log. */
export function capturingLogger(level = 'info'): { log: Logger; lines: string[]; bytes(): number } {
  const lines: string[] = [];
  let total = 0;
  const log = pino({ level, base: { service: 'fleet' } }, {
    write(line: string) {
      lines.push(line);
      total += Buffer.byteLength(line);
    },
  });
  return { log, lines, bytes: () => total };
}
