/*
 * The broker's extension point for access grant sources (docs/contracts/mcp-access.md §5.1) on
 * the real plugin (startTestBackend, its database on SQLite): a module adds a source, the
 * broker starts it with a writer over its migrated database, the writer stores and removes
 * grants under the source's prefix and refuses malformed ones; two sources with one id fail
 * start-up. The source here is the test's own (what the portal's module will be).
 */
import { createBackendModule } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  mcpAccessGrantsExtensionPoint,
  type McpAccessGrant,
  type McpAccessGrantSource,
  type McpAccessGrantWriter,
} from '@devportal/plugin-mcp-broker-node';
import { mcpBrokerPlugin } from './plugin';

/** A source that hands the test the writer it is started with. */
function recordingSource(id: string) {
  let started!: (writer: McpAccessGrantWriter) => void;
  const writer = new Promise<McpAccessGrantWriter>(resolve => (started = resolve));
  const source: McpAccessGrantSource = {
    id,
    async *listAll() {
      yield [];
    },
    async start(w) {
      started(w);
    },
  };
  return { source, writer };
}

const sourceModule = (moduleId: string, source: McpAccessGrantSource) =>
  createBackendModule({
    pluginId: 'mcp-broker',
    moduleId,
    register(env) {
      env.registerInit({
        deps: { grants: mcpAccessGrantsExtensionPoint },
        async init({ grants }) {
          grants.addGrantSource(source);
        },
      });
    },
  });

const grant: McpAccessGrant = {
  id: 'key-uid-1',
  group: 'default/example-tools',
  subject: 'user:default/alice',
  target: { kind: 'server', name: 'example' },
  title: 'Example tools',
  plan: 'bronze',
  limits: [{ calls: 5, windowMs: 60_000 }],
  approvedAt: 1_800_000_000_000,
};

describe('mcpBrokerPlugin access grant sources (startTestBackend)', () => {
  it('starts a module’s source with a writer over the broker’s database', async () => {
    const { source, writer } = recordingSource('portal');
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        sourceModule('test-grants', source),
        mockServices.rootConfig.factory({ data: { mcpBroker: { servers: [] } } }),
      ],
    });
    try {
      const w = await writer;
      await w.upsert([grant]);
      await w.replaceGroup('default/example-tools', [{ ...grant, plan: 'silver' }]);
      await w.remove([grant.id]);
      await expect(w.upsert([{ ...grant, subject: 'alice' }])).rejects.toThrow(
        /Invalid MCP access grant "key-uid-1" from source portal: subject must be a user entity ref/,
      );
    } finally {
      await backend.stop();
    }
  });

  it('fails start-up when two sources share an id', async () => {
    await expect(
      startTestBackend({
        features: [
          mcpBrokerPlugin,
          sourceModule('first', recordingSource('portal').source),
          sourceModule('second', recordingSource('portal').source),
          mockServices.rootConfig.factory({ data: { mcpBroker: { servers: [] } } }),
        ],
      }),
    ).rejects.toThrow(/Two MCP access grant sources have the id "portal"/);
  });
});
