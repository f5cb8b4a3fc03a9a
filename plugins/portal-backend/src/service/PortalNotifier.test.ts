/*
 * The wording of the notifications about access requests of MCP products (contract
 * mcp-access §4.6) next to that of API keys, through a test double of the notifications
 * service that records what is sent (the real notifications backend runs in
 * packages/backend's end-to-end tests). Which changes notify whom is tested on the service
 * (DefaultPortalService.announcements.test.ts, KeyExpiryAnnouncer.test.ts).
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { NotificationSendOptions } from '@backstage/plugin-notifications-node';
import {
  DEVPORTAL_API_VERSION,
  OWNER_ANNOTATION,
  type ApiKey,
  type ApiProductSpec,
} from '@devportal/plugin-portal-common';
import type { StoredApiProduct } from '../store/types';
import { PortalNotifier } from './PortalNotifier';

const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
const TEAM = 'group:default/payments-team';

function product(name: string, spec: Partial<ApiProductSpec>): StoredApiProduct {
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind: 'APIProduct',
    metadata: {
      namespace: 'mcp',
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      creationTimestamp: '2030-01-01T00:00:00Z',
      annotations: { [OWNER_ANNOTATION]: TEAM },
    },
    spec: {
      displayName: 'Toy store',
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
      approvalMode: 'manual',
      publishStatus: 'Published',
      ...spec,
    },
  };
}

const EXAMPLE_TOOLS = product('example-tools', {
  displayName: 'Example tools',
  targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' },
  plans: [{ tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' }] } }],
});
const TOYS = product('toys', {});

function key(name: string, of: StoredApiProduct, phase: 'Pending' | 'Approved'): ApiKey {
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind: 'APIKey',
    metadata: {
      namespace: 'mcp',
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      creationTimestamp: '2030-01-01T00:00:00Z',
    },
    spec: {
      apiProductRef: { name: of.metadata.name },
      planTier: 'bronze',
      requestedBy: { userId: ALICE },
      useCase: 'triage',
    },
    status: { phase, secretRevealed: false },
  };
}

describe('PortalNotifier', () => {
  let sent: NotificationSendOptions[];
  let notifier: PortalNotifier;

  beforeEach(() => {
    sent = [];
    notifier = PortalNotifier.create({
      notifications: {
        send: async options => {
          sent.push(options);
        },
      },
      logger: mockServices.logger.mock(),
    });
  });

  const payloads = () => sent.map(options => options.payload);

  it('tells owners of a new access request what it is for, naming the MCP server', async () => {
    await notifier.keyRequested(key('r1', EXAMPLE_TOOLS, 'Pending'), EXAMPLE_TOOLS, TEAM);
    await notifier.keyRequested(key('k1', TOYS, 'Pending'), TOYS, TEAM);
    expect(payloads()).toMatchObject([
      {
        title: 'New access request for Example tools (MCP server example)',
        description: `${ALICE} requests bronze access to Example tools: triage`,
        topic: 'APIProduct mcp/example-tools',
      },
      {
        title: 'New API key request for Toy store',
        description: `${ALICE} requests a bronze key for Toy store: triage`,
      },
    ]);
  });

  it('words reviews of access requests as access, and of keys as keys', async () => {
    const request = key('r1', EXAMPLE_TOOLS, 'Approved');
    await notifier.keysReviewed(
      [{ key: request, product: EXAMPLE_TOOLS }],
      'approve',
      undefined,
      BOB,
    );
    await notifier.keysReviewed(
      [
        { key: key('r2', EXAMPLE_TOOLS, 'Approved'), product: EXAMPLE_TOOLS },
        { key: key('k1', TOYS, 'Approved'), product: TOYS },
      ],
      'reject',
      'not now',
      BOB,
    );
    expect(payloads().map(p => p.title)).toEqual([
      'Your bronze access request for Example tools was approved',
      '2 of your API key requests for Example tools, mcp/toys were rejected',
    ]);
  });

  it('says who revoked an access grant and why, in the title, with high severity', async () => {
    await notifier.keyDeleted(
      { key: key('r1', EXAMPLE_TOOLS, 'Approved'), product: EXAMPLE_TOOLS },
      'left the team',
      BOB,
    );
    await notifier.keyDeleted(
      { key: key('r2', EXAMPLE_TOOLS, 'Pending'), product: EXAMPLE_TOOLS },
      undefined,
      BOB,
    );
    expect(payloads()).toMatchObject([
      {
        title: `Your access to Example tools was revoked by ${BOB}: left the team`,
        description: `Your access to Example tools was revoked by ${BOB}: left the team`,
        severity: 'high',
      },
      { title: 'Your bronze access request for Example tools was deleted', severity: 'normal' },
    ]);
  });

  it('words an expired key by its kind, and one whose product is gone as a key', async () => {
    await notifier.keysExpired(
      [{ key: key('k1', TOYS, 'Approved'), product: TOYS }],
      'system:key-expiry',
    );
    await notifier.keysExpired(
      [{ key: key('r1', EXAMPLE_TOOLS, 'Approved') }],
      'system:key-expiry',
    );
    expect(payloads().map(p => p.title)).toEqual([
      'Your bronze API key for mcp/toys expired',
      'Your bronze API key for mcp/example-tools expired',
    ]);
  });
});
