/*
 * The pinned tool definitions' endpoints (spec §13), under /api/mcp-broker, for holders of
 * `mcp-broker.tool.approve`:
 *   GET  /pins                           the held and rejected changes, old and new side by side
 *   POST /pins/:server/:tool/approve     pin the changed definition: JSON { digest? }
 *   POST /pins/:server/:tool/reject      keep the old one, withhold the tool: JSON { digest? }
 * `digest` names the definition the approver looked at: when the backend changed the tool again
 * meanwhile the decision is refused (409) instead of approving something nobody saw. `:tool` is
 * the backend's own tool name (URL-encoded). Errors are @backstage/errors bodies.
 */
import type { HttpAuthService, PermissionsService } from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  mcpBrokerToolApprovePermission,
  type McpToolChange,
} from '@devportal/plugin-mcp-broker-common';
import express, { type Request } from 'express';
import Router from 'express-promise-router';
import { z } from 'zod';
import { isValidServerName } from '../config';
import { PinDecisionError, type ToolPins } from '../pinning/ToolPins';
import type { ToolPinRecord } from '../pinning/toolPinStore';

/** Dependencies of {@link createPinsRouter}. */
export interface PinsRouterOptions {
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  pins: ToolPins;
  /** The prefixed name clients see for a server's tool (absent when the server is gone). */
  clientNameOf(server: string, tool: string): string | undefined;
}

const decisionBody = z
  .object({
    digest: z
      .string({ invalid_type_error: 'digest must be a string' })
      .regex(/^[0-9a-f]{64}$/, 'digest must be the 64 hex digits GET /pins shows')
      .optional(),
  })
  .strict();

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

  router.get('/pins', async (req, res) => {
    await approver(req);
    const changes = await pins.pendingChanges();
    res.json({
      changes: changes.map(record =>
        viewOf(record, options.clientNameOf(record.server, record.tool)),
      ),
    });
  });

  router.post(
    '/pins/:server/:tool/:decision',
    express.json({ limit: '16kb' }),
    async (req, res) => {
      const { server, tool, decision } = req.params;
      if (decision !== 'approve' && decision !== 'reject') {
        throw new NotFoundError(`No such decision "${decision}": use approve or reject`);
      }
      const by = await approver(req);
      if (!isValidServerName(server)) {
        throw new InputError('The server name must use lower-case letters, digits and "-"');
      }
      const parsed = decisionBody.safeParse(req.body ?? {});
      if (!parsed.success) {
        throw new InputError(
          `Invalid body: ${parsed.error.issues.map(issue => issue.message).join('; ')}`,
        );
      }
      try {
        const record = await pins[decision](server, tool, parsed.data.digest, by);
        res.json({
          server: record.server,
          tool: record.tool,
          digest: record.digest,
          ...(record.pending ? { state: record.pending.state } : { state: 'pinned' }),
        });
      } catch (error) {
        if (error instanceof PinDecisionError) {
          throw error.reason === 'stale'
            ? new ConflictError(error.message)
            : new NotFoundError(error.message);
        }
        throw error;
      }
    },
  );

  return router;
}
