/** What the webhook delivery thread (thread-entry.ts) and its host (thread.ts) say to each other. */

/** `id` pairs a request with its answer. */
export type ToWebhookThread =
  | { type: 'catchUp'; id: number }
  | { type: 'waitFor'; id: number; position: string }
  | { type: 'stop' };

export type FromWebhookThread = { type: 'started' } | { type: 'answer'; id: number; error: string | null };
