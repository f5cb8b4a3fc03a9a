import {
  brokerUiUri,
  qualifiedUiUri,
  resultWithBrokerUiUris,
  toolUiResourceUri,
  toolWithBrokerUiUris,
} from './uiResourceUris';

const servers = new Set(['vanilla', 'react']);
const isServer = (name: string) => servers.has(name);

describe('broker UI URIs', () => {
  it.each([
    'ui://get-time/mcp-app.html',
    'ui:///x',
    'ui://dash',
    'ui://',
    'ui://app/view?x=1&y=%2F#frag',
    'ui://{+path}',
  ])('round-trips %s exactly through the broker form', uri => {
    const shown = brokerUiUri('vanilla', uri);
    expect(shown.startsWith('ui://vanilla/')).toBe(true);
    expect(qualifiedUiUri(shown, isServer)).toEqual({ server: 'vanilla', uri });
  });

  it('gives two servers’ equal UI URIs different broker URIs', () => {
    const uri = 'ui://get-time/mcp-app.html';
    expect(brokerUiUri('vanilla', uri)).toBe('ui://vanilla/get-time/mcp-app.html');
    expect(brokerUiUri('react', uri)).toBe('ui://react/get-time/mcp-app.html');
  });

  it('leaves every other URI alone, case-sensitively', () => {
    for (const uri of ['file:///a', 'UI://get-time/x', 'https://x/ui://y', 'uix://a']) {
      expect(brokerUiUri('vanilla', uri)).toBe(uri);
      expect(qualifiedUiUri(uri, isServer)).toBeUndefined();
    }
  });

  it('reads a UI URI whose authority names no server as unqualified', () => {
    expect(qualifiedUiUri('ui://get-time/mcp-app.html', isServer)).toBeUndefined();
    expect(qualifiedUiUri('ui://vanilla', isServer)).toBeUndefined();
  });

  it('rewrites both of a tool’s UI links and nothing else', () => {
    const tool = {
      name: 'get-time',
      _meta: {
        ui: { resourceUri: 'ui://get-time/mcp-app.html', visibility: ['model', 'app'] },
        'ui/resourceUri': 'ui://get-time/mcp-app.html',
        other: 'ui://left/alone',
      },
    };
    const shown = toolWithBrokerUiUris('react', tool);
    expect(shown).toEqual({
      name: 'get-time',
      _meta: {
        ui: { resourceUri: 'ui://react/get-time/mcp-app.html', visibility: ['model', 'app'] },
        'ui/resourceUri': 'ui://react/get-time/mcp-app.html',
        other: 'ui://left/alone',
      },
    });
    expect(tool._meta.ui.resourceUri).toBe('ui://get-time/mcp-app.html');
    expect(toolUiResourceUri(shown)).toBe('ui://react/get-time/mcp-app.html');
    const plain = { name: 'echo', _meta: { x: 1 } };
    expect(toolWithBrokerUiUris('react', plain)).toBe(plain);
    expect(toolUiResourceUri(plain)).toBeUndefined();
  });

  it('rewrites resource links, embedded resources and read contents in results, not text', () => {
    const result = {
      content: [
        { type: 'text', text: 'see ui://get-time/mcp-app.html' },
        { type: 'resource_link', uri: 'ui://get-time/mcp-app.html', name: 'app' },
        { type: 'resource', resource: { uri: 'ui://get-time/a.html', text: '<p>' } },
        { type: 'resource_link', uri: 'file:///x', name: 'file' },
      ],
      structuredContent: { uri: 'ui://get-time/mcp-app.html' },
      _meta: { ui: { resourceUri: 'ui://get-time/mcp-app.html' } },
    };
    expect(resultWithBrokerUiUris('vanilla', result)).toEqual({
      content: [
        { type: 'text', text: 'see ui://get-time/mcp-app.html' },
        { type: 'resource_link', uri: 'ui://vanilla/get-time/mcp-app.html', name: 'app' },
        { type: 'resource', resource: { uri: 'ui://vanilla/get-time/a.html', text: '<p>' } },
        { type: 'resource_link', uri: 'file:///x', name: 'file' },
      ],
      structuredContent: { uri: 'ui://get-time/mcp-app.html' },
      _meta: { ui: { resourceUri: 'ui://vanilla/get-time/mcp-app.html' } },
    });
    const read = { contents: [{ uri: 'ui://get-time/mcp-app.html', text: '<html>' }] };
    expect(resultWithBrokerUiUris('vanilla', read)).toEqual({
      contents: [{ uri: 'ui://vanilla/get-time/mcp-app.html', text: '<html>' }],
    });
    const prompt = {
      messages: [{ role: 'user', content: { type: 'resource_link', uri: 'ui://a/b', name: 'b' } }],
    };
    expect(resultWithBrokerUiUris('vanilla', prompt)).toEqual({
      messages: [
        { role: 'user', content: { type: 'resource_link', uri: 'ui://vanilla/a/b', name: 'b' } },
      ],
    });
    const plain = { content: [{ type: 'text', text: 'x' }] };
    expect(resultWithBrokerUiUris('vanilla', plain)).toBe(plain);
  });
});
