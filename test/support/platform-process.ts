/**
 * The platform as users start it: `node dist/main.js` in a child process, on
 * free ports and a data directory of the test's choosing.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from './ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** dist/main.js from the test sources (vitest) and from their compiled copy in dist/test (benches). */
export const MAIN = basename(ROOT) === 'dist' ? join(ROOT, 'main.js') : join(ROOT, 'dist', 'main.js');

export interface PlatformEnv extends NodeJS.ProcessEnv {
  FLEET_DATA_DIR: string;
}

/** Environment for a platform on free local ports; `ports` are http, teltonika, gt06, jt808. */
export async function platformEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): Promise<{ env: PlatformEnv; ports: { http: number; teltonika: number; gt06: number; jt808: number } }> {
  const [http, teltonika, gt06, jt808] = (await freePorts(4)) as [number, number, number, number];
  const env: PlatformEnv = {
    ...process.env,
    FLEET_DATA_DIR: dataDir,
    FLEET_SECRET_KEY: randomBytes(32).toString('base64'), // not a key file beside the temporary data dir, left behind in the temp directory
    FLEET_HTTP_PORT: String(http),
    FLEET_TELTONIKA_PORT: String(teltonika),
    FLEET_GT06_PORT: String(gt06),
    FLEET_JT808_PORT: String(jt808),
    FLEET_HTTP_HOST: '127.0.0.1',
    FLEET_GATEWAY_HOST: '127.0.0.1',
    FLEET_LOG_LEVEL: 'warn',
    // Receivers in tests listen on 127.0.0.1.
    FLEET_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...extra,
  };
  return { env, ports: { http, teltonika, gt06, jt808 } };
}

export interface PlatformProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends the signal and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `fleet start` and resolves once it says it is running (rejects if it exits first). */
/** `nodeArgs`: flags for node itself (a bench's --cpu-prof), before the script; `startTimeoutMs`: how long it may take (a rebuild bench's start includes the rebuild). */
export function startPlatformProcess(env: NodeJS.ProcessEnv, args: string[] = [], nodeArgs: string[] = [], startTimeoutMs = 60_000): Promise<PlatformProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the platform did not start within ${startTimeoutMs / 1000} s: ${out}`));
    }, startTimeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Fleet platform is running')) {
        clearTimeout(timer);
        // The banner is written in one call: wait for its end before handing it over.
        setImmediate(() => resolve({ child, output: () => out, stop }));
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the platform exited with ${code}: ${out}`));
    });
  });
}
