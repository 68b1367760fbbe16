/**
 * The `fleet` command line (`fleet help`): its commands, their options and help, and its exit codes
 * (2: a command line we cannot run as written or a configuration error; 1: a failure). Starting the
 * platform is the composition root's (main.ts), which hands it in.
 */
import { parseArgs } from 'node:util';
import { ALL_ROLES, ConfigError, loadConfig, type Config, type Role } from '../core/config.js';
import { CUSTOMER_COMMANDS } from './customers.js';

/** `fleet start`: runs the platform with these roles until a signal stops it. */
export type StartPlatform = (config: Config, roles: Role[]) => Promise<void>;

/** One command of the `fleet` line: its words, its options (node:util parseArgs) and its help. */
export interface Command {
  words: string[];
  synopsis: string;
  summary: string;
  /** Each option: the placeholder of its value (none: a flag) and what it does. */
  options: Record<string, { value?: string; help: string }>;
  run(values: Record<string, string | boolean | undefined>, start: StartPlatform): Promise<void>;
}

function parseRoles(raw: string | undefined): Role[] {
  if (!raw) return [...ALL_ROLES];
  const roles = raw.split(',').map((r) => r.trim());
  for (const r of roles) if (!ALL_ROLES.includes(r as Role)) throw new ConfigError(`unknown role ${r}; roles are ${ALL_ROLES.join(', ')}`);
  return roles as Role[];
}

const COMMANDS: readonly Command[] = [
  {
    words: ['start'],
    synopsis: 'fleet [start] [--roles gateway,projections,api]',
    summary: 'Starts the platform on the configured store (FLEET_* environment variables; all roles by default).',
    options: { roles: { value: 'ROLES', help: `comma-separated roles to run in this process: ${ALL_ROLES.join(', ')}` } },
    run: (v, start) => start(loadConfig(), parseRoles(v.roles as string | undefined)),
  },
  ...CUSTOMER_COMMANDS,
];

const USAGE = [
  'usage:',
  ...COMMANDS.map((c) => `  ${c.synopsis}`),
  '  fleet help [COMMAND]',
  '',
  "Run 'fleet help COMMAND' or 'fleet COMMAND --help' for a command's options.",
  '',
].join('\n');

function commandUsage(c: Command): string {
  const flags = Object.entries(c.options).map(([name, o]) => [`--${name}${o.value ? ` ${o.value}` : ''}`, o.help]);
  flags.push(['-h, --help', 'this help']);
  const width = Math.max(...flags.map(([f]) => f!.length)) + 2;
  return [`usage: ${c.synopsis}`, '', c.summary, '', 'options:', ...flags.map(([f, h]) => `  ${f!.padEnd(width)}${h}`), ''].join('\n');
}

/** A command line we cannot run as written: one line saying why, then the usage; exit code 2. */
class UsageError extends Error {
  constructor(message: string, readonly usage: string) {
    super(message);
  }
}

const isHelp = (arg: string): boolean => arg === '--help' || arg === '-h';

/** The command the words name, and the arguments after them; `fleet`, `fleet --roles …` are `start`. */
function findCommand(argv: string[]): { command: Command; args: string[] } | null {
  if (argv.length === 0 || argv[0]!.startsWith('-')) return { command: COMMANDS[0]!, args: argv };
  for (const command of COMMANDS) {
    if (command.words.every((w, i) => argv[i] === w)) return { command, args: argv.slice(command.words.length) };
  }
  return null;
}

function usageOfWords(words: string[]): string | null {
  const matching = COMMANDS.filter((c) => words.every((w, i) => c.words[i] === w));
  if (matching.length === 0) return null;
  return matching.length === 1 ? commandUsage(matching[0]!) : `usage:\n${matching.map((c) => `  ${c.synopsis}`).join('\n')}\n`;
}

/** parseArgs' errors, said in one line (its own messages run to several sentences). */
function parseError(err: Error & { code?: string }, c: Command): UsageError {
  const quoted = /'([^']+)'/.exec(err.message)?.[1] ?? '';
  const where = `fleet ${c.words.join(' ')}`;
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`${where}: unknown option ${quoted}`, commandUsage(c));
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`${where}: unexpected argument ${quoted}`, commandUsage(c));
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(`${where}: ${quoted.replace(/ <value>$/, '')} needs a value`, commandUsage(c));
    default:
      return new UsageError(`${where}: ${err.message.split('. ')[0]}`, commandUsage(c));
  }
}

/** Runs the command `argv` names; rejects with a UsageError or ConfigError for the operator. */
export async function cli(argv: string[], start: StartPlatform): Promise<void> {
  if (argv.length === 1 && isHelp(argv[0]!)) return void process.stdout.write(USAGE);
  if (argv[0] === 'help') {
    const words = argv.slice(1).filter((w) => !isHelp(w));
    const usage = words.length === 0 ? USAGE : usageOfWords(words);
    if (usage === null) throw new UsageError(`fleet help: no command ${words.join(' ')}`, USAGE);
    return void process.stdout.write(usage);
  }
  const found = findCommand(argv);
  if (!found) {
    // `fleet customer`, `fleet customer --help`, `fleet customer delete`: about the customer commands.
    const first = argv[0]!;
    const group = usageOfWords([first]);
    if (group === null) throw new UsageError(`fleet: unknown command ${first}`, USAGE);
    const rest = argv.slice(1);
    if (rest.length === 0) throw new UsageError(`fleet ${first}: which command?`, group);
    if (rest.length === 1 && isHelp(rest[0]!)) return void process.stdout.write(group);
    throw new UsageError(`fleet ${first}: unknown command ${rest[0]}`, group);
  }
  const { command, args } = found;
  const beforeSeparator = args.indexOf('--') === -1 ? args : args.slice(0, args.indexOf('--'));
  if (beforeSeparator.some(isHelp)) return void process.stdout.write(commandUsage(command));
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.value ? ('string' as const) : ('boolean' as const) }]));
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw parseError(err as Error & { code?: string }, command);
  }
  return command.run(values, start);
}

/** `fleet ARGS…` as the process: a usage or configuration error says why and exits 2, any other failure exits 1. */
export function runCommandLine(argv: string[], start: StartPlatform): void {
  cli(argv, start).catch((err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${err.usage}`);
      process.exit(2);
    }
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
