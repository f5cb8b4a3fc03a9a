/*
 * Waits until the broker's kept-alive connection to a backend is back in its pool, ready to be
 * reused (undici hands a connection back one event-loop turn after its answer ended), so that a
 * test can show the next request reuses it.
 */
import { idleBackendConnections } from '../httpExchange';
import { waitFor } from '../../testing/waitFor';

/** Resolves once exactly one idle connection to `url`'s origin waits in the pool. */
export async function connectionReturned(url: string): Promise<void> {
  await waitFor(() => idleBackendConnections(url) === 1, 'the connection back in the pool');
}
