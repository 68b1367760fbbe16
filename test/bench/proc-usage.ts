import { readFileSync } from 'node:fs';

/** CPU seconds (user + system, every thread), current and peak RSS of a process so far, from /proc (Linux). */
export function procUsage(pid: number): { cpuS: number; rssMb: number; peakRssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuS: (Number(fields[11]) + Number(fields[12])) / 100, rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}
