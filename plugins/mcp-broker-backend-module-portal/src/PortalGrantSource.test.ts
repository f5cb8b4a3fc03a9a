/*
 * PortalGrantSource with test doubles of both plugins (named so): the portal is a fetch that
 * answers the grant routes from an in-memory list, the broker a writer that records each call.
 * The whole flow against the real portal, broker and RBAC plugin is
 * packages/backend/src/e2e/mcpAccessFlow.test.ts.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { McpAccessGrantWriter } from '@devportal/plugin-mcp-broker-node';
import { type McpGrant, PortalClient } from '@devportal/plugin-portal-common';
import { accessGrantOf } from './accessGrantOf';
import { PortalGrantSource } from './PortalGrantSource';

const grant = (name: string, subject = 'user:default/alice'): McpGrant => ({
  key: { namespace: 'mcp', name, uid: `uid-${name}` },
  product: { namespace: 'mcp', name: 'example-tools', displayName: 'Example tools' },
  target: { kind: 'MCPServer', name: 'example' },
  subject,
  tier: 'gold',
  limits: {
    toolCalls: [
      { calls: 100, per: 'day' },
      { calls: 10, per: 'minute', tools: ['deploy'] },
    ],
  },
  approvedAt: '2026-11-29T03:00:00.000Z',
  expiresAt: '2027-01-01T00:00:00.000Z',
});

/** A portal double: GET /mcp/grants (paged by `limit`) and GET /mcp/grants/:ns/:name. */
function portalDouble(grants: McpGrant[]) {
  const requests: string[] = [];
  const fetch = async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    requests.push(`${url.pathname}${url.search}`);
    const one = url.pathname.match(/\/mcp\/grants\/([^/]+)\/([^/]+)$/);
    if (one) {
      const found = grants.find(g => g.key.namespace === one[1] && g.key.name === one[2]);
      return found
        ? Response.json(found)
        : Response.json(
            { error: { name: 'NotFoundError', message: 'not a live access grant' } },
            { status: 404 },
          );
    }
    const product = url.searchParams.get('product');
    const matching = grants.filter(g => product === null || g.product.name === product);
    const limit = Number(url.searchParams.get('limit') ?? matching.length);
    const start = Number(url.searchParams.get('continue') ?? 0);
    const next = start + limit;
    return Response.json({
      items: matching.slice(start, next),
      metadata: next < matching.length ? { continue: String(next) } : {},
    });
  };
  const client = new PortalClient({
    baseUrl: 'http://portal.test/api/portal',
    getToken: async () => 'service-token',
    fetch: fetch as typeof globalThis.fetch,
  });
  return { client, requests };
}

/** A broker writer double that records each call. */
function recordingWriter() {
  const calls: Array<[string, unknown]> = [];
  const writer: McpAccessGrantWriter = {
    upsert: async grants => void calls.push(['upsert', grants.map(g => g.id)]),
    remove: async ids => void calls.push(['remove', ids]),
    replaceGroup: async (group, grants) =>
      void calls.push(['replaceGroup', [group, grants.map(g => g.id)]]),
    removeGroup: async group => void calls.push(['removeGroup', group]),
  };
  return { writer, calls };
}

const MCP_TARGET = { kind: 'MCPServer', name: 'example' };
const event = (type: string, name: string, target: object | null = MCP_TARGET) => ({
  type,
  ref: { namespace: 'mcp', name },
  actor: 'user:default/bob',
  product: { namespace: 'mcp', name: 'example-tools' },
  ...(target && { target }),
  uid: `uid-${name}`,
});

describe('PortalGrantSource (portal and broker as test doubles)', () => {
  it('maps a portal grant to a broker grant: uid as id, the product as group, quotas as windows', () => {
    expect(accessGrantOf(grant('k1'))).toEqual({
      id: 'uid-k1',
      group: 'mcp/example-tools',
      subject: 'user:default/alice',
      target: { kind: 'server', name: 'example' },
      title: 'Example tools',
      plan: 'gold',
      limits: [
        { calls: 100, windowMs: 86_400_000 },
        { calls: 10, windowMs: 60_000, tools: ['deploy'] },
      ],
      approvedAt: Date.parse('2026-11-29T03:00:00.000Z'),
      expiresAt: Date.parse('2027-01-01T00:00:00.000Z'),
      links: { manage: '/portal/keys' },
    });
  });

  it('lists every grant page by page for the full sync', async () => {
    const grants = Array.from({ length: 3 }, (_, i) => grant(`k${i}`));
    const { client } = portalDouble(grants);
    const source = new PortalGrantSource({ client, logger: mockServices.logger.mock() });
    const pages: string[][] = [];
    for await (const page of source.listAll({ signal: new AbortController().signal })) {
      pages.push(page.map(g => g.id));
    }
    expect(pages.flat()).toEqual(['uid-k0', 'uid-k1', 'uid-k2']);
  });

  it('applies each event: approval upserts (or removes when no grant), revocation and expiry remove, product changes replace or remove the group', async () => {
    const { client, requests } = portalDouble([grant('live'), grant('other')]);
    const { writer, calls } = recordingWriter();
    const source = new PortalGrantSource({ client, logger: mockServices.logger.mock() });
    await source.start(writer);

    await source.onPortalEvent(event('apikey.approved', 'live'));
    await source.onPortalEvent(event('apikey.approved', 'gone'));
    await source.onPortalEvent(event('apikey.revoked', 'live'));
    await source.onPortalEvent(event('apikey.deleted', 'other'));
    await source.onPortalEvent(event('apikey.expired', 'late'));
    await source.onPortalEvent(event('apikey.requested', 'other'));
    await source.onPortalEvent(event('apiproduct.updated', 'example-tools'));
    await source.onPortalEvent(event('apiproduct.deleted', 'example-tools'));
    expect(calls).toEqual([
      ['upsert', ['uid-live']],
      ['remove', ['uid-gone']],
      ['remove', ['uid-live']],
      ['remove', ['uid-other']],
      ['remove', ['uid-late']],
      ['replaceGroup', ['mcp/example-tools', ['uid-live', 'uid-other']]],
      ['removeGroup', 'mcp/example-tools'],
    ]);

    // An event of a product on an HTTPRoute (or of an older portal, without target): no read.
    const readsBefore = requests.length;
    await source.onPortalEvent(
      event('apikey.approved', 'live', { kind: 'HTTPRoute', name: 'toystore' }),
    );
    await source.onPortalEvent(event('apikey.approved', 'live', null));
    expect(requests).toHaveLength(readsBefore);
    expect(calls).toHaveLength(7);
  });

  it('logs a failed read without the body and never throws', async () => {
    const logger = mockServices.logger.mock();
    const client = new PortalClient({
      baseUrl: 'http://portal.test/api/portal',
      getToken: async () => 'service-token',
      fetch: (async () =>
        Response.json(
          { error: { name: 'ServiceUnavailableError', message: 'database down' } },
          { status: 503 },
        )) as typeof globalThis.fetch,
    });
    const { writer, calls } = recordingWriter();
    const source = new PortalGrantSource({ client, logger });
    await source.start(writer);
    await expect(source.onPortalEvent(event('apikey.approved', 'live'))).resolves.toBeUndefined();
    expect(calls).toEqual([]);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining(
        'could not apply portal event apikey.approved of mcp/live; the next full sync repairs it',
      ),
    );
  });
});
