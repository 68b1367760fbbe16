/**
 * The operator's command line against a running platform: `fleet customer
 * create` and `fleet customer set-rate-limit` run as their own processes on
 * the platform's data directory, and the API follows what they recorded.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { silentLogger } from '../../core/logger.js';
import { startPlatform, type RunningPlatform } from '../../main.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fleet-cli-'));
const env = { ...process.env, FLEET_DATA_DIR: dir, FLEET_LOG_LEVEL: 'silent' };
let platform: RunningPlatform;

async function fleet(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MAIN, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  const config = loadConfig({ FLEET_DATA_DIR: dir, FLEET_SECRET_KEY: randomBytes(32).toString('base64'), FLEET_HTTP_PORT: '0', FLEET_HTTP_HOST: '127.0.0.1' });
  platform = await startPlatform(config, ['projections', 'api'], silentLogger);
});

afterAll(async () => {
  await platform.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet customer …', () => {
  it('creates an Enterprise customer, enters its agreed rate limit, and returns it to the plan default', async () => {
    const created = await fleet('customer', 'create', '--name', 'Big Haulage', '--plan', 'enterprise', '--json');
    expect(created.code, created.stderr).toBe(0);
    const { customer_id, api_key } = JSON.parse(created.stdout) as { customer_id: string; api_key: string };
    const policy = async () => {
      await platform.runner!.catchUp();
      const res = await fetch(`http://127.0.0.1:${platform.ports.http}/v1/devices`, { headers: { authorization: `Bearer ${api_key}` } });
      expect(res.status).toBe(200);
      return res.headers.get('ratelimit-policy');
    };
    expect(await policy()).toBe('"enterprise";q=120000;w=120');

    const agreed = await fleet('customer', 'set-rate-limit', '--customer', customer_id, '--per-minute', '3000', '--burst', '6000');
    expect(agreed.code, agreed.stderr).toBe(0);
    expect(agreed.stdout).toContain('3000 requests a minute, bursts of 6000');
    expect(await policy()).toBe('"enterprise";q=6000;w=120');

    expect((await fleet('customer', 'set-rate-limit', '--customer', customer_id, '--plan-default')).code).toBe(0);
    expect(await policy()).toBe('"enterprise";q=120000;w=120');
  }, 30_000);

  it('creates the first panel user with --email: the password is printed once and logs in; a taken email is refused', async () => {
    const created = await fleet('customer', 'create', '--name', 'Panel Haulage', '--email', 'Boss@Panel.example');
    expect(created.code, created.stderr).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines[2]).toBe('login    boss@panel.example');
    const password = /^password (\S+) {2}\(shown once: keep it\)$/.exec(lines[3]!)?.[1];
    expect(password).toMatch(/^[\w-]{24}$/);
    const login = await fetch(`http://127.0.0.1:${platform.ports.http}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'boss@panel.example', password }),
    });
    expect(login.status).toBe(201);
    expect(((await login.json()) as { customer: { name: string } }).customer.name).toBe('Panel Haulage');

    const taken = await fleet('customer', 'create', '--name', 'Copycat', '--email', 'boss@panel.example', '--json');
    expect([taken.code, taken.stdout]).toEqual([2, '']);
    expect(taken.stderr.trim()).toBe('--email: A user with the email boss@panel.example already exists.');
  }, 30_000);

  it('refuses an unknown customer and half or invalid limits with exit code 2 and a message', async () => {
    const unknown = await fleet('customer', 'set-rate-limit', '--customer', 'cus_01jbz3k8x6m2q9w4e7r5t1y0ha', '--per-minute', '60', '--burst', '10');
    expect([unknown.code, unknown.stderr.trim()]).toEqual([2, 'no customer cus_01jbz3k8x6m2q9w4e7r5t1y0ha']);
    const half = await fleet('customer', 'set-rate-limit', '--customer', 'cus_01jbz3k8x6m2q9w4e7r5t1y0ha', '--per-minute', '60');
    expect([half.code, half.stderr.trim()]).toEqual([2, '--per-minute and --burst must both be whole numbers of at least 1']);
    const both = await fleet('customer', 'set-rate-limit', '--customer', 'cus_01jbz3k8x6m2q9w4e7r5t1y0ha', '--per-minute', '60', '--burst', '9', '--plan-default');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('either');
  }, 30_000);
});
