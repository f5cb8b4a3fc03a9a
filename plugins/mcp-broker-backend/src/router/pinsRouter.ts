/*
 * The pinned tool definitions' endpoints (spec §13), entries of `brokerOperations`, for holders
 * of `mcp-broker.tool.approve`:
 *   GET  /pins                           the held and rejected changes, old and new side by side
 *   POST /pins/:server/:tool/approve     pin the changed definition: JSON { digest? }
 *   POST /pins/:server/:tool/reject      keep the old one, withhold the tool: JSON { digest? }
 * `digest` names the definition the approver looked at: when the backend changed the tool again
 * meanwhile the decision is refused (409) instead of approving something nobody saw. `:tool` is
 * the backend's own tool name (URL-encoded). Errors are @backstage/errors bodies.
 */
import type { HttpAuthService, PermissionsService } from '@backstage/backend-plugin-api';
import { ConflictError, NotAllowedError, NotFoundError } from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  mcpBrokerToolApprovePermission,
  type McpToolChange,
} from '@devportal/plugin-mcp-broker-common';
import express, { type Request } from 'express';
import Router from 'express-promise-router';
import { PinDecisionError, type ToolPins } from '../pinning/ToolPins';
import type { ToolPinRecord } from '../pinning/toolPinStore';
import { bindBrokerOperation } from './bindBrokerOperation';

/** Dependencies of {@link createPinsRouter}. */
export interface PinsRouterOptions {
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  pins: ToolPins;
  /** The prefixed name clients see for a server's tool (absent when the server is gone). */
  clientNameOf(server: string, tool: string): string | undefined;
}

/** One held or rejected change as GET /pins shows it. */
function viewOf(record: ToolPinRecord, clientName: string | undefined): McpToolChange {
  const pending = record.pending!;
  return {
    server: record.server,
    tool: record.tool,
    ...(clientName === undefined ? {} : { name: clientName }),
    state: pending.state,
    since: new Date(pending.since).toISOString(),
    ...(pending.decidedBy ? { rejectedBy: pending.decidedBy } : {}),
    pinned: {
      digest: record.digest,
      definition: record.definition,
      pinnedAt: new Date(record.pinnedAt).toISOString(),
      ...(record.pinnedBy ? { approvedBy: record.pinnedBy } : {}),
    },
    changed: { digest: pending.digest, definition: pending.definition },
  };
}

/** Builds the pins router; see the file comment. */
export function createPinsRouter(options: PinsRouterOptions): express.Router {
  const { httpAuth, permissions, pins } = options;
  const router = Router();

  const approver = async (req: Request) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const [decision] = await permissions.authorize(
      [{ permission: mcpBrokerToolApprovePermission }],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `Deciding on changed tool definitions needs the permission ${mcpBrokerToolApprovePermission.name}`,
      );
    }
    return credentials.principal.userEntityRef;
  };

  bindBrokerOperation(router, 'listToolChanges', async ({ req }) => {
    await approver(req);
    const changes = await pins.pendingChanges();
    return {
      changes: changes.map(record =>
        viewOf(record, options.clientNameOf(record.server, record.tool)),
      ),
    };
  });

  bindBrokerOperation(
    router,
    'decideToolChange',
    async ({ req, params: { server, tool, decision }, body }) => {
      const by = await approver(req);
      try {
        const record = await pins[decision](server, tool, body.digest, by);
        return {
          server: record.server,
          tool: record.tool,
          digest: record.digest,
          state: record.pending ? record.pending.state : ('pinned' as const),
        };
      } catch (error) {
        if (error instanceof PinDecisionError) {
          throw error.reason === 'stale'
            ? new ConflictError(error.message)
            : new NotFoundError(error.message);
        }
        throw error;
      }
    },
    { before: [express.json({ limit: '16kb' })] },
  );

  return router;
}
