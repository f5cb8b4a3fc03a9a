import { ConfigReader } from '@backstage/config';
import { readCuratedEndpoints } from './endpointConfig';

const read = (endpoints: unknown) =>
  readCuratedEndpoints(new ConfigReader({ mcpBroker: { endpoints } } as any));

describe('readCuratedEndpoints (mcpBroker.endpoints)', () => {
  it('reads an endpoint with every key', () => {
    const [triage] = read({
      triage: {
        title: 'Incident triage',
        instructions: 'Read-only tools for triage.',
        servers: ['jira', 'grafana', 'jira'],
        tools: { include: ['jira_search*', 'grafana_*'], exclude: ['grafana_admin_*'] },
        annotations: { readOnlyHint: true },
        overrides: { jira_search: { title: 'Search tickets', description: 'Search by JQL.' } },
      },
    });
    expect(triage).toEqual({
      name: 'triage',
      title: 'Incident triage',
      instructions: 'Read-only tools for triage.',
      servers: ['jira', 'grafana'],
      include: ['jira_search*', 'grafana_*'],
      exclude: ['grafana_admin_*'],
      annotations: { readOnlyHint: true },
      overrides: new Map([
        ['jira_search', { title: 'Search tickets', description: 'Search by JQL.' }],
      ]),
    });
  });

  it('defaults to every tool of the servers, with no filters or overrides', () => {
    expect(read({ small: { servers: ['example'] } })).toEqual([
      { name: 'small', servers: ['example'], exclude: [], annotations: {}, overrides: new Map() },
    ]);
    expect(readCuratedEndpoints(new ConfigReader({}))).toEqual([]);
  });

  it.each([
    [{ Bad: { servers: ['a'] } }, /Invalid mcpBroker\.endpoints\.Bad: an endpoint name uses/],
    [{ [`e${'x'.repeat(63)}`]: { servers: ['a'] } }, /at most 63 characters/],
    [{ e: {} }, /Invalid mcpBroker\.endpoints\.e\.servers: name at least one broker server/],
    [{ e: { servers: [] } }, /mcpBroker\.endpoints\.e\.servers: name at least one/],
    [{ e: { servers: ['Not OK'] } }, /mcpBroker\.endpoints\.e\.servers\[0\]: "Not OK" is not/],
    [{ e: { servers: 'a' } }, /mcpBroker\.endpoints\.e\.servers: must be a list of strings/],
    [
      { e: { servers: ['a'], tools: { include: ['a_*', ''] } } },
      /Invalid mcpBroker\.endpoints\.e\.tools\.include\[1\]: a glob of 1 to 200 characters/,
    ],
    [
      { e: { servers: ['a'], annotations: { readOnly: true } } },
      /mcpBroker\.endpoints\.e\.annotations\.readOnly: use readOnlyHint, destructiveHint/,
    ],
    [
      { e: { servers: ['a'], annotations: { readOnlyHint: 'yes' } } },
      /mcpBroker\.endpoints\.e\.annotations\.readOnlyHint: must be true or false/,
    ],
    [
      { e: { servers: ['a'], overrides: { a_x: { name: 'y' } } } },
      /mcpBroker\.endpoints\.e\.overrides\.a_x\.name: an override has title and description/,
    ],
    [
      { e: { servers: ['a'], overrides: { a_x: {} } } },
      /mcpBroker\.endpoints\.e\.overrides\.a_x: give a title, a description or both/,
    ],
    [
      { e: { servers: ['a'], instructions: 'x'.repeat(4001) } },
      /mcpBroker\.endpoints\.e\.instructions: at most 4000 characters/,
    ],
    [{ e: { servers: ['a'], title: ' ' } }, /mcpBroker\.endpoints\.e\.title: must be a non-empty/],
  ])('refuses %j with a message naming the key', (endpoints, message) => {
    expect(() => read(endpoints)).toThrow(message);
  });
});
