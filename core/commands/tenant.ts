/**
 * The tenant stream (`tenant-{customer}`): the customer's creation, its agreed
 * limits and its credentials. Commands decide on its first event only: the
 * stream grows with every token and key-use flush, and whether a key or client
 * exists is read from the credential read model (credentials.ts), not folded here.
 */
import type { CustomerCreated } from '../events.js';
import type { Aggregate } from './handler.js';
import { CommandRejected } from './rejection.js';

export interface TenantState {
  /** The stream has events (a tenant written without its creation exists only in tests). */
  exists: boolean;
  customer: CustomerCreated['data'] | null;
}

export const tenantStream: Aggregate<TenantState> = {
  initial: { exists: false, customer: null },
  // Later events change neither: only the first can be the creation.
  evolve: (state, event) => (state.exists ? state : { exists: true, customer: event.type === 'CustomerCreated' ? event.data : null }),
  reads: 'first',
};

/** An unknown customer is not found. */
export function checkCustomer(state: TenantState, customerId: string): CustomerCreated['data'] {
  if (!state.customer) throw new CommandRejected('not_found', 'not_found', `No customer ${customerId}.`);
  return state.customer;
}
