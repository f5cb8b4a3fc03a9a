/*
 * Tells the approvers of a held tool change (spec §13) through Backstage notifications: one
 * notification to the entity refs of `mcpBroker.toolPinning.notify` (users or groups), linking
 * to the MCP tools page, on the topic of the server. Backstage cannot list who holds a
 * permission, so the recipients are named in config; without any, nobody is notified (the
 * change is still logged and audited).
 */
import type { NotificationService } from '@backstage/plugin-notifications-node';
import type { HeldToolChange } from './ToolPins';

/** The page approvers are sent to (the portal's MCP tools page). */
export const TOOL_CHANGES_LINK = '/mcp';

/** A `notify` function for {@link ToolPins}, or undefined when nobody is to be told. */
export function toolPinNotifier(
  notifications: NotificationService,
  recipients: readonly string[],
): ((change: HeldToolChange) => Promise<void>) | undefined {
  if (recipients.length === 0) return undefined;
  return async change => {
    await notifications.send({
      recipients: { type: 'entity', entityRef: [...recipients] },
      payload: {
        title: `MCP server "${change.server}" changed tool "${change.tool}": held for approval`,
        description:
          `Its ${change.changed.join(', ') || 'definition'} changed. The tool is withheld from ` +
          'everyone until someone who may approve tool changes approves the new definition.',
        link: TOOL_CHANGES_LINK,
        severity: 'high',
        topic: `mcp-broker:${change.server}`,
      },
    });
  };
}
