/**
 * A thread's share of a machine whose cores are all busy. Linux keeps a nice value per
 * thread: a thread that raises its own yields the cores to its process's other threads
 * when they want them, and still runs at full speed on a core nobody else wants.
 */
import { setPriority } from 'node:os';

/**
 * Raises the calling thread's nice value to `niceness` (Linux only: elsewhere the same call
 * sets the whole process's priority, so it is left alone). Threads this one starts afterwards
 * inherit it. Says whether it took effect; a refusal is no reason for the thread not to run.
 */
export function lowerThisThreadsPriority(niceness: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // pid 0 is the calling thread, not the whole process, on Linux.
    setPriority(0, niceness);
    return true;
  } catch {
    return false;
  }
}
