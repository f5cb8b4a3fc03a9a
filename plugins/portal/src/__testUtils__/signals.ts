/*
 * Test doubles for live updates in component tests (jsdom runs no signals or notifications
 * backend): an in-memory signal API whose test publishes on a channel, and a notifications API
 * that answers `getNotification` from a list. The browser tests use the real ones.
 */
import type { SignalApi } from '@backstage/plugin-signals-react';
import type { NotificationsApi } from '@backstage/plugin-notifications';

/** A signal's message (the API's own type, `JsonObject`). */
type JsonObject = Parameters<Parameters<SignalApi['subscribe']>[1]>[0];
/** A notification as the notifications API answers it. */
type Notification = Awaited<ReturnType<NotificationsApi['getNotification']>>;

/** A signal API in memory, with `publish` for the test. */
export class FakeSignalApi implements SignalApi {
  readonly #subscribers = new Map<string, Set<(message: JsonObject) => void>>();

  subscribe<T extends JsonObject = JsonObject>(channel: string, onMessage: (message: T) => void) {
    const listeners = this.#subscribers.get(channel) ?? new Set();
    const listener = onMessage as (message: JsonObject) => void;
    listeners.add(listener);
    this.#subscribers.set(channel, listeners);
    return { unsubscribe: () => listeners.delete(listener) };
  }

  /** Delivers `message` to every subscriber of `channel`. */
  publish(channel: string, message: JsonObject) {
    for (const listener of this.#subscribers.get(channel) ?? []) listener(message);
  }

  /** How many subscribers `channel` has now. */
  subscribers(channel: string): number {
    return this.#subscribers.get(channel)?.size ?? 0;
  }
}

/** A notifications API that knows `notifications` (only `getNotification` is used). */
export function fakeNotificationsApi(notifications: Array<Pick<Notification, 'id' | 'origin'>>) {
  return {
    getNotification: jest.fn(async (id: string) => {
      const found = notifications.find(notification => notification.id === id);
      if (found === undefined) throw new Error(`no notification ${id}`);
      return {
        user: 'user:default/alice',
        created: new Date(),
        payload: { title: 'Your access request was approved' },
        ...found,
      } as Notification;
    }),
  } as unknown as jest.Mocked<NotificationsApi>;
}
