/*
 * The portal and the MCP broker stay independent (contract mcp-access §1): they meet through
 * REST, Backstage's events service and (later) an extension point, never through each other's
 * packages. This reads every package.json under plugins/ and fails on a dependency across the
 * families, and checks the one string both families must agree on without sharing a package:
 * the annotations naming a server or endpoint on entities.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as mcpBrokerCommon from '@devportal/plugin-mcp-broker-common';
import * as portalCommon from '@devportal/plugin-portal-common';

const PLUGINS_DIR = path.resolve(__dirname, '../../../plugins');

/** Packages that may name both families: the bridge module and the frontend (it calls both APIs). */
const BRIDGES = new Set([
  '@devportal/plugin-mcp-broker-backend-module-portal',
  '@devportal/plugin-portal',
]);

const isPortalFamily = (name: string) =>
  /^@devportal\/plugin-(portal|catalog-backend-module-portal)(-|$)/.test(name) &&
  !BRIDGES.has(name);
const isBrokerFamily = (name: string) =>
  /^@devportal\/plugin-(mcp-broker|catalog-backend-module-mcp-broker)(-|$)/.test(name) &&
  !BRIDGES.has(name);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifests: Manifest[] = fs
  .readdirSync(PLUGINS_DIR)
  .map(dir => path.join(PLUGINS_DIR, dir, 'package.json'))
  .filter(file => fs.existsSync(file))
  .map(file => JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest);

const dependenciesOf = (manifest: Manifest) => [
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.devDependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
];

describe('plugin independence (contract mcp-access §1)', () => {
  it('reads the packages of both families (a pattern that matched nothing would pass every tree)', () => {
    const names = manifests.map(m => m.name);
    expect(names.filter(isPortalFamily)).toEqual(
      expect.arrayContaining([
        '@devportal/plugin-portal-backend',
        '@devportal/plugin-portal-common',
        '@devportal/plugin-catalog-backend-module-portal',
      ]),
    );
    expect(names.filter(isBrokerFamily)).toEqual(
      expect.arrayContaining([
        '@devportal/plugin-mcp-broker-backend',
        '@devportal/plugin-mcp-broker-common',
        '@devportal/plugin-catalog-backend-module-mcp-broker',
      ]),
    );
  });

  it.each(manifests.filter(m => isPortalFamily(m.name)).map(m => [m.name, m] as const))(
    '%s depends on no mcp-broker package',
    (_name, manifest) => {
      expect(dependenciesOf(manifest).filter(isBrokerFamily)).toEqual([]);
    },
  );

  it.each(manifests.filter(m => isBrokerFamily(m.name)).map(m => [m.name, m] as const))(
    '%s depends on no portal package',
    (_name, manifest) => {
      expect(dependenciesOf(manifest).filter(isPortalFamily)).toEqual([]);
    },
  );

  it('both common packages name servers and endpoints on entities with the same annotations', () => {
    expect(portalCommon.MCP_SERVER_ANNOTATION).toBe(mcpBrokerCommon.MCP_SERVER_ANNOTATION);
    expect(portalCommon.MCP_ENDPOINT_ANNOTATION).toBe(mcpBrokerCommon.MCP_ENDPOINT_ANNOTATION);
    expect(mcpBrokerCommon.MCP_SERVER_ANNOTATION).toBe('mcp.devportal.io/server');
  });
});
