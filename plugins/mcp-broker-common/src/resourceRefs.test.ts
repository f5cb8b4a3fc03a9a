import { parseMcpBrokerResourceRef, stringifyMcpBrokerResourceRef } from './resourceRefs';

describe('MCP broker resource refs', () => {
  it('round-trips names and URIs that contain colons', () => {
    for (const name of ['echo', 'example://readme', 'file:///{path}', '']) {
      const ref = stringifyMcpBrokerResourceRef({ server: 'docs-1', name });
      expect(parseMcpBrokerResourceRef(ref)).toEqual({ server: 'docs-1', name });
    }
    expect(stringifyMcpBrokerResourceRef({ server: 'example', name: 'echo' })).toBe('example:echo');
  });

  it('refuses refs without a server part', () => {
    expect(parseMcpBrokerResourceRef('echo')).toBeUndefined();
    expect(parseMcpBrokerResourceRef(':echo')).toBeUndefined();
  });
});
