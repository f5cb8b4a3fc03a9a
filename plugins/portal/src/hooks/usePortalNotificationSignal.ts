/*
 * Calls back when a notification of the portal reaches the signed-in person, as it arrives: the
 * notifications backend signals each new notification on the `notifications` channel (Backstage
 * signals), and the notification itself says which plugin sent it (`origin` `plugin:portal`).
 * The portal notifies a person when their access changes (approved, rejected, revoked, expired),
 * so a page that shows what they may use reloads on it instead of waiting for a reload. An app
 * without signals or notifications gets no callbacks; the page still works, without live updates.
 */
import { useApiHolder } from '@backstage/frontend-plugin-api';
import { notificationsApiRef } from '@backstage/plugin-notifications';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { useEffect, useRef } from 'react';

/** The channel the notifications backend signals new notifications on. */
export const NOTIFICATIONS_CHANNEL = 'notifications';

/** The origin of the portal backend's notifications (its plugin id as a service principal). */
export const PORTAL_NOTIFICATION_ORIGIN = 'plugin:portal';

/** Runs `onNotification` for each new portal notification of the signed-in person. */
export function usePortalNotificationSignal(onNotification: () => void): void {
  const apis = useApiHolder();
  const signals = apis.get(signalApiRef);
  const notifications = apis.get(notificationsApiRef);
  // The latest callback, so a new one does not resubscribe.
  const callback = useRef(onNotification);
  callback.current = onNotification;
  useEffect(() => {
    if (signals === undefined || notifications === undefined) return undefined;
    let active = true;
    const subscription = signals.subscribe<{ action?: string; notification_id?: string }>(
      NOTIFICATIONS_CHANNEL,
      async message => {
        if (message.action !== 'new_notification' || message.notification_id === undefined) {
          return;
        }
        try {
          const notification = await notifications.getNotification(message.notification_id);
          if (active && notification.origin === PORTAL_NOTIFICATION_ORIGIN) callback.current();
        } catch {
          // Gone or unreadable already: nothing of the person's access to show from it.
        }
      },
    );
    return () => {
      active = false;
      subscription.unsubscribe();
    };
  }, [signals, notifications]);
}
