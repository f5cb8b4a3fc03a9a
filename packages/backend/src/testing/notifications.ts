/*
 * Reads a signed-in user's notifications from the real notifications backend
 * (`GET /api/notifications/notifications`), for end-to-end tests of what the portal sends.
 */
import type { BackendProcess } from './startBackendProcess';

/** A notification as the notifications backend lists it (the fields the tests read). */
export interface ListedNotification {
  id: string;
  user: string;
  origin: string;
  payload: {
    title: string;
    description?: string;
    link?: string;
    topic?: string;
    severity?: string;
  };
}

/** The notifications of the user `token` belongs to on `topic` (newest first). */
export async function notificationsOf(
  backend: BackendProcess,
  token: string,
  topic: string,
): Promise<ListedNotification[]> {
  const query = new URLSearchParams({ topic, limit: '100' });
  const response = await fetch(`${backend.baseUrl}/api/notifications/notifications?${query}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) {
    throw new Error(
      `GET /api/notifications/notifications answered ${response.status}: ${await response.text()}`,
    );
  }
  const body = (await response.json()) as {
    notifications: ListedNotification[];
  };
  return body.notifications;
}
