/* mcpBroker.kubernetes: defaults, and start-up errors that name the key to fix. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigReader } from '@backstage/config';
import { mockServices } from '@backstage/backend-test-utils';
import { createKubernetesDiscovery } from './createKubernetesDiscovery';
import { ServerSetComposer } from './ServerSetComposer';
import { readKubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';

const read = (kubernetes: unknown) =>
  readKubernetesDiscoveryConfig(new ConfigReader({ mcpBroker: { kubernetes } } as any));

describe('readKubernetesDiscoveryConfig', () => {
  it('is off without the section or with enabled: false', () => {
    expect(readKubernetesDiscoveryConfig(new ConfigReader({ mcpBroker: {} }))).toBeUndefined();
    expect(read({ enabled: false, inCluster: true })).toBeUndefined();
  });

  it('applies defaults', () => {
    expect(read({ inCluster: true })).toEqual({
      source: { type: 'in-cluster' },
      namespaces: undefined,
      labelSelector: undefined,
      requestTimeoutMs: 10_000,
      routes: { scheme: 'http', port: undefined },
      resyncIntervalMs: 300_000,
      backoff: { initialDelayMs: 500, maxDelayMs: 30_000 },
    });
    expect(read({ kubeconfig: '/k', context: 'c', namespaces: ['a'] })).toMatchObject({
      source: { type: 'kubeconfig', path: '/k', context: 'c' },
      namespaces: ['a'],
    });
  });

  it.each([
    [
      { inCluster: true, kubeconfig: '/k' },
      /mcpBroker\.kubernetes: set either inCluster or kubeconfig/,
    ],
    [{ namespaces: ['Not_OK'] }, /mcpBroker\.kubernetes\.namespaces\[0\]/],
    [{ routes: { scheme: 'ftp' } }, /mcpBroker\.kubernetes\.routes\.scheme/],
    [{ routes: { port: 70000 } }, /mcpBroker\.kubernetes\.routes\.port/],
    [{ requestTimeout: 'soon' }, /mcpBroker\.kubernetes\.requestTimeout/],
  ])('refuses %j naming the key', (section, message) => {
    expect(() => read(section)).toThrow(message);
  });

  it('fails at start (not later) when the kubeconfig cannot be read or lacks the context', () => {
    const logger = mockServices.logger.mock();
    const start = (kubernetes: unknown) =>
      createKubernetesDiscovery({
        config: read(kubernetes)!,
        logger,
        profiles: new Map(),
        pluginBaseUrls: async () => [],
        onServers: () => {},
        onEndpoints: () => {},
      });
    expect(() => start({ kubeconfig: '/nonexistent/kubeconfig' })).toThrow(
      /mcpBroker\.kubernetes\.kubeconfig \/nonexistent\/kubeconfig cannot be read/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-'));
    try {
      const file = path.join(dir, 'config');
      fs.writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]',
          'users: [{ name: u, user: { token: t } }]',
          'contexts: [{ name: dev, context: { cluster: c, user: u } }]',
          'current-context: dev',
        ].join('\n'),
      );
      expect(() => start({ kubeconfig: file, context: 'prod' })).toThrow(
        /mcpBroker\.kubernetes\.context "prod" is not in the kubeconfig/,
      );
      expect(() => start({ kubeconfig: file, context: 'dev' })).not.toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ServerSetComposer', () => {
  it('puts config entries first and skips a registration whose name a config entry already has', () => {
    const logger = mockServices.logger.mock();
    const applied: string[][] = [];
    const composer = new ServerSetComposer(
      servers => applied.push(servers.map(s => s.name)),
      logger,
    );
    const server = (name: string, source?: any) => ({
      name,
      url: 'http://x/mcp',
      toolPrefix: '',
      headers: {},
      source,
    });
    composer.setConfigServers([server('mcp-alpha')]);
    composer.setKubernetesServers([
      server('mcp-alpha', { type: 'kubernetes', namespace: 'mcp', name: 'alpha' }),
      server('mcp-beta', { type: 'kubernetes', namespace: 'mcp', name: 'beta' }),
    ]);
    expect(applied).toEqual([['mcp-alpha'], ['mcp-alpha', 'mcp-beta']]);
    expect(composer.compose().find(s => s.name === 'mcp-alpha')!.source).toBeUndefined();
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringMatching(
        /MCPServerRegistration mcp\/alpha is not used: its server name "mcp-alpha" is taken/,
      ),
    );
  });
});
