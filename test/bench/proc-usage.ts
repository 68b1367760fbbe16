import { readdirSync, readFileSync } from 'node:fs';

/** User + system CPU seconds in a /proc stat line (a process's or a thread's), its fields counted after the name's parentheses. */
function cpuSecondsOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds (user + system, every thread), current and peak RSS of a process so far, from /proc (Linux). */
export function procUsage(pid: number): { cpuS: number; rssMb: number; peakRssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuS: cpuSecondsOf(readFileSync(`/proc/${pid}/stat`, 'utf8')), rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/**
 * CPU seconds so far of each thread name in a process (Linux, /proc/PID/task): the
 * platform names its threads after their roles (core/thread-name.ts); threads of one
 * name (V8's and libuv's helpers are all "node") are summed.
 */
export function threadCpuByName(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      byName.set(name, (byName.get(name) ?? 0) + cpuSecondsOf(stat));
    } catch {
      // The thread ended between the listing and the read: its time is in neither reading.
    }
  }
  return byName;
}

/** What each thread name used between two readings. */
export function threadCpuSpent(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([name, s]) => [name, s - (before.get(name) ?? 0)]));
}

/**
 * A bench line of where a server's CPU went, largest first: each thread name's seconds and its
 * µs per unit of work (`count` records or requests), after `indent`; names that used under 0.05 s
 * are left out, and with none left, so is the line.
 */
export function threadCpuLine(spent: Map<string, number>, count: number, unit: string, digits: number, indent: string): string {
  const shown = [...spent].filter(([, s]) => s >= 0.05).sort((a, b) => b[1] - a[1]);
  if (shown.length === 0) return '';
  const perUnit = (s: number) => ((s / count) * 1e6).toFixed(digits);
  return `${indent}server threads, cpu s (µs per ${unit}): ${shown.map(([name, s]) => `${name} ${s.toFixed(1)} (${perUnit(s)})`).join(', ')}\n`;
}

/**
 * CPU seconds so far of a process and its children, live and ended (a PostgreSQL server: the
 * postmaster and one backend per connection), from /proc (Linux).
 */
export function processTreeCpuS(pid: number): number {
  const fields = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = fields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  // utime, stime, and the cutime and cstime of children already waited for.
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = fields(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (Number(f[1]) === pid) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks / 100;
}
