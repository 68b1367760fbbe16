/** Events of webhook endpoints (part of the DomainEvent union in core/events.ts). */
/**
 * Webhook endpoints: one stream per endpoint (`webhook-{id}`). The secret is
 * stored encrypted (`secret_ciphertext`: AES-256-GCM with the server's secret
 * key, never in the data directory), so a copy of the log does not give it away.
 */
export interface WebhookEndpointCreated {
  type: 'WebhookEndpointCreated';
  data: {
    webhook_id: string;
    customer_id: string;
    url: string;
    /** Exact kinds, `prefix.*` or `*`. */
    events: string[];
    /** null: every device of the customer. */
    device_ids: string[] | null;
    description: string | null;
    enabled: boolean;
    secret_ciphertext: string;
    created_at: number;
  };
}

/** Only the fields that changed are present. */
export interface WebhookEndpointUpdated {
  type: 'WebhookEndpointUpdated';
  data: {
    webhook_id: string;
    customer_id: string;
    url?: string;
    events?: string[];
    device_ids?: string[] | null;
    description?: string | null;
    enabled?: boolean;
    updated_at: number;
  };
}

/** A new secret; the previous one still signs (in `-Previous`) until `previous_valid_until`. */
export interface WebhookSecretRotated {
  type: 'WebhookSecretRotated';
  data: { webhook_id: string; customer_id: string; secret_ciphertext: string; previous_valid_until: number; rotated_at: number };
}

/** Disabled by the platform (not the customer): the receiver said 410, or failed for days. */
export interface WebhookEndpointDisabled {
  type: 'WebhookEndpointDisabled';
  data: { webhook_id: string; customer_id: string; reason: 'gone' | 'failing'; detail: string; disabled_at: number };
}

export interface WebhookEndpointDeleted {
  type: 'WebhookEndpointDeleted';
  data: { webhook_id: string; customer_id: string; deleted_at: number };
}

/** Send one delivery again (a new attempt series with the same event_id and body). */
export interface WebhookRedeliveryRequested {
  type: 'WebhookRedeliveryRequested';
  data: { webhook_id: string; customer_id: string; delivery_id: string; requested_at: number };
}

/** Send every matching event of [from, to) again to this endpoint, with their original event_ids. */
export interface WebhookReplayRequested {
  type: 'WebhookReplayRequested';
  data: { webhook_id: string; customer_id: string; replay_id: string; from: number; to: number; events: string[] | null; requested_at: number };
}
