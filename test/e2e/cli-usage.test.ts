/**
 * The `fleet` command as a user meets it (bin/fleet.js over the build): help on every
 * command, and a one-line error with the usage and exit code 2 for what it cannot run,
 * never a stack trace. None of these may start the platform: a run that does not exit
 * on its own within the timeout fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/fleet.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fleet-cli-usage-'));
const env = { ...process.env, FLEET_DATA_DIR: dir, FLEET_LOG_LEVEL: 'silent', FLEET_HTTP_PORT: '0' };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function fleet(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

const COMMANDS: Array<{ words: string[]; synopsis: string; options: string[] }> = [
  { words: ['start'], synopsis: 'fleet [start] [--roles gateway,projections,api]', options: ['--roles'] },
  {
    words: ['customer', 'create'],
    synopsis: 'fleet customer create --name NAME [--plan free|pro|enterprise] [--speed-limit-kmh N] [--email EMAIL [--user-name NAME]] [--json]',
    options: ['--name', '--plan', '--speed-limit-kmh', '--email', '--user-name', '--json'],
  },
  {
    words: ['customer', 'set-rate-limit'],
    synopsis: 'fleet customer set-rate-limit --customer ID (--per-minute N --burst N | --plan-default)',
    options: ['--customer', '--per-minute', '--burst', '--plan-default'],
  },
];

function expectNoStackTrace(run: Run): void {
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stderr).not.toContain('TypeError');
}

describe('fleet help', () => {
  it.each([['--help'], ['-h'], ['help']])('`fleet %s` prints every command on stdout and exits 0', async (arg) => {
    const run = await fleet(arg);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    for (const c of COMMANDS) expect(run.stdout).toContain(c.synopsis);
    expect(run.stdout).toContain('fleet help [COMMAND]');
  });

  for (const c of COMMANDS) {
    const name = c.words.join(' ');
    it.each([
      ['help', ...c.words],
      [...c.words, '--help'],
      [...c.words, '-h'],
    ])(`\`fleet %s …\` prints the usage of ${name}`, async (...args) => {
      const run = await fleet(...args);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.split('\n')[0]).toBe(`usage: ${c.synopsis}`);
      for (const option of c.options) expect(run.stdout).toContain(`  ${option}`);
    });
  }

  it('`fleet customer --help` lists the customer commands', async () => {
    const run = await fleet('customer', '--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(COMMANDS[1]!.synopsis);
    expect(run.stdout).toContain(COMMANDS[2]!.synopsis);
  });

  it('--help wins over the other options: nothing runs', async () => {
    const run = await fleet('customer', 'create', '--name', 'Not Created', '--help');
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('api key');
    expect(run.stdout.split('\n')[0]).toBe(`usage: ${COMMANDS[1]!.synopsis}`);
  });
});

describe('fleet with what it cannot run', () => {
  it.each([
    [['customer', 'create', '--nme', 'Acme'], 'fleet customer create: unknown option --nme', COMMANDS[1]!.synopsis],
    [['customer', 'create', '--name'], 'fleet customer create: --name needs a value', COMMANDS[1]!.synopsis],
    [['customer', 'create', '--name', 'Acme', 'extra'], 'fleet customer create: unexpected argument extra', COMMANDS[1]!.synopsis],
    [['customer', 'set-rate-limit', '-x'], 'fleet customer set-rate-limit: unknown option -x', COMMANDS[2]!.synopsis],
    [['--rols', 'api'], 'fleet start: unknown option --rols', COMMANDS[0]!.synopsis],
    [['start', 'now'], 'fleet start: unexpected argument now', COMMANDS[0]!.synopsis],
    [['frobnicate'], 'fleet: unknown command frobnicate', 'fleet help [COMMAND]'],
    [['customer'], 'fleet customer: which command?', COMMANDS[2]!.synopsis],
    [['customer', 'delete'], 'fleet customer: unknown command delete', COMMANDS[1]!.synopsis],
    [['help', 'frobnicate'], 'fleet help: no command frobnicate', 'fleet help [COMMAND]'],
  ])('`fleet %s`: one line, the usage, exit code 2', async (args, line, usage) => {
    const run = await fleet(...args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const [first, blank, ...rest] = run.stderr.split('\n');
    expect([first, blank]).toEqual([line, '']);
    expect(rest.join('\n')).toContain(usage);
    expectNoStackTrace(run);
  });
});
