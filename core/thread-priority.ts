/**
 * A thread's share of a machine whose cores are all busy. Linux keeps a nice value per
 * thread: a thread that raises its own yields the cores to its process's other threads
 * when they want them, and still runs at full speed on a core nobody else wants.
 */
import { setPriority } from 'node:os';

/**
 * Raises the calling thread's nice value to `niceness` (Linux only: elsewhere the same call
 * sets the whole process's priority, so it is left alone). Threads this one starts afterwards
 * inherit it. A refusal (a process already nicer than that may not raise its priority back)
 * leaves the thread as it was, which is no reason for it not to run.
 */
export function lowerThisThreadsPriority(niceness: number): void {
  if (process.platform !== 'linux') return;
  try {
    // pid 0 is the calling thread, not the whole process, on Linux.
    setPriority(0, niceness);
  } catch {
    // Refused: the thread keeps the priority it has.
  }
}
