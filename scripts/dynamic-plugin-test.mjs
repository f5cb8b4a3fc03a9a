#!/usr/bin/env node
/*
 * Red Hat Developer Hub route: both backend plugins exported as dynamic plugins and loaded by
 * `@backstage/backend-dynamic-feature-service`, the way RHDH loads them.
 * 1. exports each plugin with the pinned RHDH CLI (`rhdh-cli plugin export`, tools/rhdh-cli,
 *    installed with `npm ci` on first use) into its git-ignored dist-dynamic/; each plugin
 *    embeds its common package (@devportal/plugin-portal-common, -mcp-broker-common),
 *    @devportal/backend-request-body and @devportal/backend-kubernetes-client (not on a
 *    registry yet);
 * 2. copies the exports into a dynamic-plugins root of a minimal backend in a temporary folder
 *    whose only feature is `dynamicPluginsFeatureLoader` (no import of our packages anywhere);
 * 3. starts it on fresh PostgreSQL databases, calls one portal route and the broker's
 *    `initialize`, and checks both plugins' migrations ran.
 *
 * Needs: BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING, the npm registry (or warm npm and
 * Yarn caches). Usage: node scripts/dynamic-plugin-test.mjs [--keep]   (yarn test:dynamic-plugins)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createTestBackend,
  installedVersion,
  probeTestBackend,
  repoRoot,
  sh,
  shLocked,
} from './lib/test-backend.mjs';

// The feature-service release of Backstage 1.55 (its dependencies ask for backend-defaults ^0.18.0).
const DYNAMIC_FEATURE_SERVICE_VERSION = '0.8.7';
const exported = [
  {
    dir: 'plugins/portal-backend',
    args: [
      '--embed-package',
      '@devportal/plugin-portal-common',
      '@devportal/backend-request-body',
      '@devportal/backend-kubernetes-client',
    ],
  },
  {
    dir: 'plugins/mcp-broker-backend',
    args: [
      '--embed-package',
      '@devportal/plugin-mcp-broker-common',
      '@devportal/plugin-mcp-broker-node',
      '@devportal/backend-request-body',
      '@devportal/backend-kubernetes-client',
    ],
  },
];

const keep = process.argv.includes('--keep');
const pgUrl = process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING;
if (!pgUrl) {
  console.log(
    'dynamic-plugins: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set',
  );
  process.exit(0);
}

const toolDir = path.join(repoRoot, 'tools/rhdh-cli');
const rhdhCli = path.join(toolDir, 'node_modules/.bin/rhdh-cli');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dynamic-plugins-'));
const app = path.join(work, 'backend');
const pluginsRoot = path.join(app, 'dynamic-plugins-root');

let failure;
try {
  // 1. Export. The CLI builds each package, repackages it (Backstage packages become peer
  // dependencies shared with the host) and installs its private dependencies into dist-dynamic.
  // npm keeps a copy of the lockfile it installed from: reinstall when ours is newer.
  const installedLock = path.join(toolDir, 'node_modules/.package-lock.json');
  const lock = path.join(toolDir, 'package-lock.json');
  if (
    !fs.existsSync(rhdhCli) ||
    !fs.existsSync(installedLock) ||
    fs.statSync(installedLock).mtimeMs < fs.statSync(lock).mtimeMs
  ) {
    sh('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: toolDir });
  }
  const hostPeers = {};
  const pluginNames = [];
  fs.mkdirSync(pluginsRoot, { recursive: true });
  for (const { dir, args } of exported) {
    shLocked(rhdhCli, ['plugin', 'export', '--clean', ...args], { cwd: path.join(repoRoot, dir) });
    const distDynamic = path.join(repoRoot, dir, 'dist-dynamic');
    const manifest = JSON.parse(fs.readFileSync(path.join(distDynamic, 'package.json'), 'utf8'));
    if (!manifest.name.endsWith('-dynamic'))
      throw new Error(`${dir}: exported package is named ${manifest.name}`);
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
      if (name.startsWith('@backstage/'))
        throw new Error(`${manifest.name} bundles ${name}@${range} instead of sharing it`);
    }
    Object.assign(hostPeers, manifest.peerDependencies);
    pluginNames.push(manifest.name);
    // RHDH's installer unpacks the exported package (bundled node_modules included) into its
    // dynamic-plugins root, one folder per plugin; a copy gives the same layout.
    fs.cpSync(
      distDynamic,
      path.join(pluginsRoot, manifest.name.replace('@', '').replace('/', '-')),
      {
        recursive: true,
      },
    );
    console.log(
      `${manifest.name}: exported, shares ${Object.keys(manifest.peerDependencies ?? {}).join(', ')}`,
    );
  }

  // 2. The host backend: public packages only, plus the Backstage packages the plugins share
  // (RHDH's backend provides these itself).
  const backend = await createTestBackend({
    app,
    name: 'dynamic-plugins-backend',
    pgUrl,
    dependencies: {
      ...hostPeers,
      '@backstage/backend-defaults': installedVersion('@backstage/backend-defaults'),
      '@backstage/backend-dynamic-feature-service': DYNAMIC_FEATURE_SERVICE_VERSION,
      pg: '^8.11.0',
    },
    indexJs: `const { createBackend } = require('@backstage/backend-defaults');
const { dynamicPluginsFeatureLoader } = require('@backstage/backend-dynamic-feature-service');
const backend = createBackend();
backend.add(dynamicPluginsFeatureLoader);
backend.start();
`,
    config: { dynamicPlugins: { rootDirectory: 'dynamic-plugins-root' } },
  });

  // 3. Start it and call the plugins; the loader must say it loaded both from the plugins root.
  const output = await probeTestBackend(backend);
  for (const name of pluginNames) {
    if (!output.includes(`loaded dynamic backend plugin '${name}' from 'file://${pluginsRoot}`)) {
      throw new Error(`the backend did not log loading ${name} from ${pluginsRoot}:\n${output}`);
    }
    console.log(`${name}: loaded by dynamicPluginsFeatureLoader from dynamic-plugins-root`);
  }
} catch (error) {
  failure = error;
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
if (failure) {
  console.error(`dynamic-plugins: FAILED: ${failure.message}`);
  console.log('dynamic-plugins: 0 passed, 1 failed');
  process.exit(1);
}
console.log('dynamic-plugins: 1 passed, 0 failed');
