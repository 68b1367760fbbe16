/** Events of panel users and their sessions (part of the DomainEvent union in core/events.ts). */
/**
 * A person of a customer who logs in to the panel (stream `user-{id}`). The
 * password is kept as an scrypt hash with its salt and cost parameters
 * (core/passwords.ts), never in clear.
 */
export interface CustomerUserCreated {
  type: 'CustomerUserCreated';
  data: { user_id: string; customer_id: string; email: string; name: string; password_hash: string; created_at: number };
}

/** Claims a lowercased email across the platform (stream `user-email-…`), so two users never share a login. */
export interface UserEmailClaimed {
  type: 'UserEmailClaimed';
  data: { user_id: string; customer_id: string; email: string; claimed_at: number };
}

/**
 * A panel login (on the user's stream). Only the SHA-256 of the session
 * token is kept: a copy of the log does not let anyone in.
 */
export interface SessionStarted {
  type: 'SessionStarted';
  data: { session_id: string; user_id: string; customer_id: string; token_sha256: string; started_at: number; expires_at: number };
}

/** A logout: the session's cookie is refused from then on. */
export interface SessionEnded {
  type: 'SessionEnded';
  data: { session_id: string; user_id: string; customer_id: string; ended_at: number };
}
