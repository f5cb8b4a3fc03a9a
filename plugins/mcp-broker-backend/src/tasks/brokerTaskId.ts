/*
 * The broker task id (docs/contracts/tasks-and-apps.md §2.3): `<server>:<32 random bytes,
 * base64url without padding>`. Made before the backend is asked (it names the slot reserved under
 * the per-person bound), never derived from the backend's id, never reused. 256 bits because ids
 * are long-lived handles listed back to their owner, so they are stored as is, not hashed: the
 * randomness only has to make other people's ids unguessable (every use also compares the
 * owner). The server prefix is for people reading logs; routing never trusts it.
 */
import { randomBytes } from 'node:crypto';

/** Random bytes in a broker task id. */
export const BROKER_TASK_ID_RANDOM_BYTES = 32;

/** A fresh broker task id for a task of `server`. */
export function newBrokerTaskId(server: string): string {
  return `${server}:${randomBytes(BROKER_TASK_ID_RANDOM_BYTES).toString('base64url')}`;
}
