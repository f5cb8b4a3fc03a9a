import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import type { Knex } from 'knex';
import { mcpBrokerPlugin } from '../../plugin';
import { revocablePermission } from '../../__testUtils__/switchablePermissions';

/** The key every replica of one test file encrypts stored credentials with. */
const SHARED_KEY = randomBytes(32).toString('base64');

/** A broker replica started by {@link startTaskBroker}. */
export interface TaskBroker {
  /** The broker's MCP endpoint. */
  url: URL;
  /** Stops the replica (see {@link TaskBrokerOptions.stopsBackend}). */
  stop(): Promise<void>;
}

/** What {@link startTaskBroker} starts. */
export interface TaskBrokerOptions {
  /** The URL of the tasks fixture, configured as the server `jobs`. */
  fixtureUrl: string;
  /** The auditor feature (a `recordingAuditor().factory`). */
  auditor: unknown;
  /** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
  revoked: ReadonlySet<string>;
  /** When given, the replica's database, with `sessionStore: database` and a shared key. */
  knex?: Knex;
  /** `mcpBroker.tasks`, absent when not given. */
  tasks?: JsonObject;
  /** More `mcpBroker` keys, applied after `tasks` (so a `tasks` here replaces it). */
  extra?: JsonObject;
  /** Other root config keys (`backend.baseUrl`, say). */
  rootConfig?: JsonObject;
  /**
   * Whether `stop` stops the whole backend (the broker drains first, as a replica's shutdown
   * does) instead of only its HTTP server.
   */
  stopsBackend?: boolean;
}

/**
 * A real broker replica (the broker plugin in a test backend) with the fixture as `jobs`, a fast
 * reconnect and permission decisions that expire after 10 ms.
 */
export async function startTaskBroker(options: TaskBrokerOptions): Promise<TaskBroker> {
  const { fixtureUrl, auditor, revoked, knex, tasks, extra = {}, stopsBackend = false } = options;
  const { rootConfig = {} } = options;
  const backend = await startTestBackend({
    features: [
      mcpBrokerPlugin,
      auditor as any,
      revocablePermission('mcp-broker.tool.use', revoked),
      ...(knex === undefined ? [] : [mockServices.database.factory({ knex })]),
      mockServices.rootConfig.factory({
        data: {
          ...rootConfig,
          mcpBroker: {
            servers: [{ name: 'jobs', url: fixtureUrl }],
            reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
            permissionDecisionMaxAge: { milliseconds: 10 },
            ...(tasks === undefined ? {} : { tasks }),
            ...extra,
            ...(knex === undefined
              ? {}
              : { sessionStore: 'database', credentialEncryptionKey: SHARED_KEY }),
          },
        },
      }),
    ],
  });
  const { server } = backend;
  const url = new URL(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker/mcp`,
  );
  return {
    url,
    stop: stopsBackend ? () => backend.stop() : async () => server.stop?.(),
  };
}
