/*
 * How a test shows that a notification did NOT arrive, without waiting for a number of
 * milliseconds: a backend announces prompts/list_changed (a kind the test does not count), and
 * the broker forwards it on the client's GET stream behind everything it sent there before. Once
 * the client has the marker, every earlier notification has arrived too, so the test can count.
 * Only as strong as the order of causes: the marker must be announced after whatever could have
 * caused the unwanted notification (the test waits for that first), and with a coalescing window
 * a trailing notification may still follow, so tests using this set `coalesceWindow` to 0.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../testing/waitFor';

/** A marker notification through one client's GET stream. */
export interface NotificationMarker {
  /** Announces the marker and resolves once the client has received it. */
  passThrough(): Promise<void>;
}

/**
 * Installs the client's prompts/list_changed handler; `announce` makes a backend send
 * prompts/list_changed on the broker's event stream to it (waiting first until that stream is
 * open, if needed).
 */
export function notificationMarker(
  client: Client,
  announce: () => void | Promise<void>,
): NotificationMarker {
  let received = 0;
  client.setNotificationHandler(PromptListChangedNotificationSchema, async () => {
    received++;
  });
  return {
    async passThrough() {
      const before = received;
      await announce();
      await waitFor(() => received > before, 'the marker notification');
    },
  };
}
