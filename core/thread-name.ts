/**
 * Names the calling thread as `top -H`, `ps -L`, `perf` and /proc show it, so an operator
 * (and `npm run bench`) can tell which role a busy thread runs. Linux only, through
 * /proc/thread-self/comm, which keeps 15 bytes; elsewhere, or if refused, the thread keeps
 * the name it had ("node").
 */
import { writeFileSync } from 'node:fs';

export function nameThisThread(name: string): void {
  if (process.platform !== 'linux') return;
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // A /proc without thread-self (a kernel before 3.17, a sandbox): the name is only a label.
  }
}
