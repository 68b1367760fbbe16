/**
 * The history item encoder (history-item.ts) as the history's thread loads it
 * (projections/history/thread.ts): functions do not cross threads, so the composition
 * root names its module and export. Kept apart so that naming it does not load it.
 */
import { threadEntry } from '../core/role-thread.js';
import type { HistoryItemEncoderModule } from '../projections/history/thread.js';

export const historyItemEncoderModule: HistoryItemEncoderModule = { url: threadEntry(import.meta.url, 'history-item').href, exportName: 'historyItemJson' };
