/**
 * `fleet start` runs the platform in a worker thread and its main thread only watches
 * it (main.ts): the process still answers the operator's signals, and a platform that
 * cannot start still ends the process with the reason and a failing exit code.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAIN, platformEnv, startPlatformProcess } from '../support/platform-process.js';

const parent = mkdtempSync(join(tmpdir(), 'fleet-platform-thread-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

function run(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('fleet start', () => {
  it('stops on SIGINT: the platform drains in its thread and the process exits 0', async () => {
    const { env, ports } = await platformEnv(join(parent, 'sigint'), { FLEET_LOG_LEVEL: 'info' });
    const platform = await startPlatformProcess(env);
    try {
      expect((await fetch(`http://127.0.0.1:${ports.http}/healthz`)).status).toBe(200);
      // Ready as the banner says: the demo customer that first start created is in every read model already.
      const ready = await fetch(`http://127.0.0.1:${ports.http}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: { projections: { lag_events: number } } }).checks.projections.lag_events).toBe(0);
    } finally {
      // Also when an expectation failed: a platform left running outlives the test run.
      await platform.stop('SIGINT');
    }
    expect(platform.child.exitCode).toBe(0);
    expect(platform.output()).toContain('"signal":"SIGINT","msg":"stopping"');
  }, 60_000);

  it('exits 1 with the reason when a port is taken, instead of running without its API', async () => {
    const { env, ports } = await platformEnv(join(parent, 'taken'));
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(ports.http, '127.0.0.1', resolve));
    try {
      const { code, output } = await run(env);
      expect(code).toBe(1);
      expect(output).toContain('EADDRINUSE');
      expect(output).not.toContain('Fleet platform is running');
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 60_000);
});
