/**
 * The data directory holds every customer's positions and credential hashes:
 * created readable by its owner only, and the demo key printed on the first
 * start only, with the panel URL and the demo login's password (later starts
 * name the file that keeps them).
 */
import { mkdtempSync, rmSync, statSync, readdirSync, readFileSync, mkdirSync, chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MAIN, platformEnv, startPlatformProcess, type PlatformProcess } from '../support/platform-process.js';

const parent = mkdtempSync(join(tmpdir(), 'fleet-private-'));
let running: PlatformProcess | null = null;
afterAll(async () => {
  await running?.stop('SIGKILL');
  rmSync(parent, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe('data directory', () => {
  it('is created 0700 with 0600 files; the demo key is printed on the first start only', async () => {
    const dataDir = join(parent, 'nested', 'data');
    // No FLEET_SECRET_KEY: the webhook secret key goes to its default key file.
    const { env } = await platformEnv(dataDir, { FLEET_SECRET_KEY: '' });

    running = await startPlatformProcess(env);
    const first = running.output();
    await running.stop();
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo-customer.json'), 'utf8')) as { api_key: string; email: string; password: string };
    const key = demo.api_key;
    expect(first).toContain(`Bearer ${key}`);
    expect(demo.email).toBe('demo@fleet.local');
    expect(first).toContain(`  Panel:       http://localhost:${env.FLEET_HTTP_PORT}/  (log in as demo@fleet.local / ${demo.password})\n`);

    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(parent, 'nested'))).toBe(0o700);
    const files = readdirSync(dataDir);
    expect(files).toEqual(expect.arrayContaining(['events.sqlite', 'events.sqlite-index', 'readmodels.sqlite', 'demo-customer.json']));
    for (const f of files) expect({ file: f, mode: mode(join(dataDir, f)) }).toEqual({ file: f, mode: 0o600 });
    // The key that seals webhook secrets lives beside the data directory, not in it: a copy of the directory does not carry it.
    expect(files.filter((f) => f.endsWith('.key'))).toEqual([]);
    expect(mode(`${dataDir}.key`)).toBe(0o600);
    const sealingKey = readFileSync(`${dataDir}.key`, 'utf8');

    running = await startPlatformProcess(env);
    const second = running.output();
    await running.stop();
    running = null;
    expect(second).not.toContain(key);
    expect(second).not.toContain(demo.password);
    expect(second).toContain(`  Panel:       http://localhost:${env.FLEET_HTTP_PORT}/  (log in as demo@fleet.local; the password is kept in ${join(dataDir, 'demo-customer.json')})`);
    expect(readFileSync(`${dataDir}.key`, 'utf8')).toBe(sealingKey);
  }, 120_000);

  it('a demo customer from before the panel gets its demo login on the next start, printed then only', async () => {
    const dataDir = join(parent, 'before-panel');
    const { env, ports } = await platformEnv(dataDir);
    // What an older version left: a demo customer (made here by the CLI, without --email) and a file without a panel login.
    const created = await promisify(execFile)(process.execPath, [MAIN, 'customer', 'create', '--name', 'Demo Fleet', '--plan', 'pro', '--json'], { env });
    const old = JSON.parse(created.stdout) as { customer_id: string; api_key: string };
    writeFileSync(join(dataDir, 'demo-customer.json'), JSON.stringify(old), { mode: 0o600 });

    running = await startPlatformProcess(env);
    const output = running.output();
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo-customer.json'), 'utf8')) as { customer_id: string; email: string; password: string };
    expect(demo).toMatchObject({ customer_id: old.customer_id, email: 'demo@fleet.local' });
    expect(output).toContain(`(log in as demo@fleet.local / ${demo.password})`);
    const login = await fetch(`http://127.0.0.1:${ports.http}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: demo.email, password: demo.password }),
    });
    expect(login.status).toBe(201);
    expect(((await login.json()) as { customer: { customer_id: string } }).customer.customer_id).toBe(old.customer_id);
    await running.stop();
    running = null;
  }, 120_000);

  it('a data directory an older version left world-readable is tightened on start', async () => {
    const dataDir = join(parent, 'old');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const { env } = await platformEnv(dataDir);
    running = await startPlatformProcess(env);
    await running.stop();
    running = null;
    for (const f of readdirSync(dataDir)) chmodSync(join(dataDir, f), 0o644);
    chmodSync(dataDir, 0o755);

    running = await startPlatformProcess(env);
    await running.stop();
    running = null;
    expect(mode(dataDir)).toBe(0o700);
    for (const f of readdirSync(dataDir).filter((name) => name.endsWith('.sqlite'))) {
      expect({ file: f, mode: mode(join(dataDir, f)) }).toEqual({ file: f, mode: 0o600 });
    }
  }, 120_000);
});
