/* One access grant fixture for the broker's grant tests: alice on server `example`, a fresh id. */
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';

let counter = 0;

/** A well-formed grant with a fresh id (approved a moment after the previous one), `overrides` applied. */
export function testGrant(overrides: Partial<McpAccessGrant> = {}): McpAccessGrant {
  counter += 1;
  return {
    id: `key-${counter}-${Math.random().toString(36).slice(2)}`,
    group: 'default/example-tools',
    subject: 'user:default/alice',
    target: { kind: 'server', name: 'example' },
    title: 'Example tools',
    plan: 'bronze',
    limits: [{ calls: 10, windowMs: 60_000 }],
    approvedAt: 1_800_000_000_000 + counter,
    links: { manage: '/portal/keys' },
    ...overrides,
  };
}
