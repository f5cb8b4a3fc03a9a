#!/usr/bin/env node
/*
 * Red Hat Developer Hub route: both backend plugins exported as dynamic plugins and loaded by
 * `@backstage/backend-dynamic-feature-service`, and the frontend plugin exported as a Scalprum
 * remote and loaded by a Scalprum host, the way RHDH loads them.
 * 1. exports each plugin with the pinned RHDH CLI (`rhdh-cli plugin export`, tools/rhdh-cli,
 *    installed with `npm ci` on first use) into its git-ignored dist-dynamic/; each backend
 *    plugin embeds its common package (@devportal/plugin-portal-common, -mcp-broker-common),
 *    @devportal/backend-request-body and @devportal/backend-kubernetes-client (not on a
 *    registry yet); the frontend plugin (plugins/portal) becomes dist-dynamic/dist-scalprum
 *    (its `scalprum` config in package.json exposes the legacy-system exports as `PluginRoot`);
 * 2. copies the backend exports into a dynamic-plugins root of a minimal backend in a temporary
 *    folder whose features are `dynamicPluginsFeatureLoader` and the auth backend with the guest
 *    provider (no import of our packages anywhere), and builds a minimal Scalprum host
 *    (scripts/lib/scalprum-host.mjs);
 * 3. starts the backend on fresh PostgreSQL databases, calls one portal route and the broker's
 *    `initialize`, and checks both plugins' migrations ran;
 * 4. while it runs, the host loads the frontend remote with the wiring of the portal README's
 *    `dynamic-plugins.yaml` entry (section "Red Hat Developer Hub": the doc is what is tested)
 *    in headless Chromium, signs in as the guest, and checks the portal page (its heading and
 *    its list from the backend, with the user's token), the menu items, and the "API access"
 *    card on an API entity page (the backend's answer for an unknown product).
 *
 * Needs: BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING, Chromium (PORTAL_BROWSER_CHROMIUM
 * or chromium on PATH), the npm registry (or warm npm and Yarn caches).
 * Usage: node scripts/dynamic-plugin-test.mjs [--keep]   (yarn test:dynamic-plugins)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_INSTALL_HINT, findChromium } from './lib/chromium.mjs';
import { freePort } from './lib/freePort.mjs';
import { buildScalprumHost, serveScalprumHost } from './lib/scalprum-host.mjs';
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
/** The frontend plugin: only the Scalprum assets RHDH's app loads (not the module federation ones). */
const frontendPlugin = { dir: 'plugins/portal', args: ['--no-generate-module-federation-assets'] };
/** The README whose `dynamic-plugins.yaml` entry the host is wired with. */
const frontendReadme = path.join(repoRoot, 'plugins/portal/README.md');
/** The API entity the host's entity page shows: a portal product that does not exist. */
const apiEntity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'API',
  metadata: {
    name: 'toystore',
    namespace: 'default',
    annotations: { 'portal.devportal.io/api-product': 'toystore/toystore' },
  },
  spec: { type: 'openapi', lifecycle: 'production', owner: 'guests', definition: 'openapi: 3.0.0' },
};

const keep = process.argv.includes('--keep');
const pgUrl = process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING;
if (!pgUrl) {
  console.log(
    'dynamic-plugins: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set',
  );
  process.exit(0);
}

/**
 * The `dynamic-plugins.yaml` entries of the portal README's "Red Hat Developer Hub" section (its
 * first yaml block): `{ package, pluginConfig }` per plugin.
 */
async function readmeDynamicPlugins() {
  const readme = fs.readFileSync(frontendReadme, 'utf8');
  const section = readme.split(/^## Red Hat Developer Hub$/m)[1];
  const block = section && /```yaml\n([\s\S]*?)```/.exec(section.split(/^## /m)[0]);
  if (!block) throw new Error(`${frontendReadme}: no yaml block in "## Red Hat Developer Hub"`);
  const { default: yaml } = await import(path.join(repoRoot, 'node_modules/yaml/dist/index.js'));
  const { plugins } = yaml.parse(block[1]);
  if (!Array.isArray(plugins)) throw new Error(`${frontendReadme}: the yaml block has no plugins`);
  return plugins;
}

/** RHDH's folder for an exported package in its dynamic-plugins root (`@a/b` → `a-b`). */
const folderOf = packageName => packageName.replace('@', '').replace('/', '-');

/**
 * Runs the RHDH CLI's export in `dir` and returns the exported package's manifest; the name must
 * end in `-dynamic`.
 */
function exportPlugin(dir, args) {
  shLocked(rhdhCli, ['plugin', 'export', '--clean', ...args], { cwd: path.join(repoRoot, dir) });
  const distDynamic = path.join(repoRoot, dir, 'dist-dynamic');
  const manifest = JSON.parse(fs.readFileSync(path.join(distDynamic, 'package.json'), 'utf8'));
  if (!manifest.name.endsWith('-dynamic'))
    throw new Error(`${dir}: exported package is named ${manifest.name}`);
  return { manifest, distDynamic };
}

/**
 * Opens the host in Chromium as the guest and checks what the README's wiring promises: its
 * menu items, the portal page with the backend's (empty) product list fetched with the user's
 * token, and the "API access" card on the API entity page with the backend's answer.
 */
async function checkFrontendInBrowser({ hostUrl, backendBaseUrl, wiring }) {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(`no Chromium found: run ${CHROMIUM_INSTALL_HINT}`);
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  });
  const pageErrors = [];
  const portalCalls = [];
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    page.on('pageerror', error => pageErrors.push(error.message));
    page.on('response', response => {
      const request = response.request();
      if (
        request.method() !== 'OPTIONS' &&
        response.url().startsWith(`${backendBaseUrl}/api/portal/`)
      )
        portalCalls.push({
          url: response.url(),
          status: response.status(),
          bearer: /^Bearer \S+$/.test(request.headers().authorization ?? ''),
        });
    });
    const portalRoute = wiring.dynamicRoutes.find(route => route.importName === 'PortalPage');
    if (!portalRoute) throw new Error('the README wires no dynamicRoute to PortalPage');
    await page.goto(`${hostUrl}${portalRoute.path}`);
    // The app's sign-in page with the guest provider, as a person enters.
    await page.getByRole('button', { name: 'Enter' }).click();
    const nav = page.getByRole('navigation', { name: 'Host navigation' });
    for (const route of wiring.dynamicRoutes) {
      await nav.getByRole('link', { name: route.menuItem.text, exact: true }).waitFor();
    }
    await page.getByRole('heading', { name: 'API products' }).waitFor();
    await page.getByText('No API products yet').waitFor();
    const listed = portalCalls.find(
      call => new URL(call.url).pathname === '/api/portal/apiproducts',
    );
    if (!listed || listed.status !== 200 || !listed.bearer) {
      throw new Error(`the page's GET /api/portal/apiproducts: ${JSON.stringify(listed)}`);
    }
    console.log(
      `frontend: ${portalRoute.path} renders the portal page; GET /api/portal/apiproducts → 200 with the guest's token`,
    );

    const { name } = apiEntity.metadata;
    await nav.getByRole('link', { name: `Entity ${name}` }).click();
    await page.getByRole('heading', { name: name, level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'API access' }).waitFor();
    await page.getByText('The API product is not available').waitFor();
    const product = portalCalls.find(call => call.url.endsWith('/apiproducts/toystore/toystore'));
    if (!product || product.status !== 404 || !product.bearer) {
      throw new Error(
        `the card's GET /api/portal/apiproducts/toystore/toystore: ${JSON.stringify(product)}`,
      );
    }
    console.log(
      'frontend: the entity card mount point shows "API access" with the backend\'s 404 for an unknown product',
    );
    if (pageErrors.length > 0) throw new Error(`errors in the page: ${pageErrors.join('; ')}`);
  } catch (error) {
    error.message += `\npage errors: ${pageErrors.join('; ') || 'none'}\nportal calls: ${JSON.stringify(portalCalls)}`;
    throw error;
  } finally {
    await browser.close();
  }
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
    const { manifest, distDynamic } = exportPlugin(dir, args);
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
      if (name.startsWith('@backstage/'))
        throw new Error(`${manifest.name} bundles ${name}@${range} instead of sharing it`);
    }
    Object.assign(hostPeers, manifest.peerDependencies);
    pluginNames.push(manifest.name);
    // RHDH's installer unpacks the exported package (bundled node_modules included) into its
    // dynamic-plugins root, one folder per plugin; a copy gives the same layout.
    fs.cpSync(distDynamic, path.join(pluginsRoot, folderOf(manifest.name)), { recursive: true });
    console.log(
      `${manifest.name}: exported, shares ${Object.keys(manifest.peerDependencies ?? {}).join(', ')}`,
    );
  }

  const frontend = exportPlugin(frontendPlugin.dir, frontendPlugin.args);
  const { scalprum } = frontend.manifest;
  const scalprumDist = path.join(frontend.distDynamic, 'dist-scalprum');
  const remoteManifest = JSON.parse(
    fs.readFileSync(path.join(scalprumDist, 'plugin-manifest.json'), 'utf8'),
  );
  if (remoteManifest.name !== scalprum.name)
    throw new Error(`dist-scalprum's manifest names ${remoteManifest.name}, not ${scalprum.name}`);
  console.log(
    `${frontend.manifest.name}: exported, Scalprum remote ${scalprum.name} exposes ${Object.keys(scalprum.exposedModules).join(', ')}`,
  );

  // The README's wiring: every package it names is one exported here, and it wires the remote.
  const documented = await readmeDynamicPlugins();
  const exportedFolders = [...pluginNames, frontend.manifest.name].map(folderOf);
  for (const entry of documented) {
    if (!exportedFolders.includes(path.basename(entry.package)))
      throw new Error(
        `the README's dynamic-plugins.yaml names ${entry.package}, which is not exported`,
      );
  }
  const wiring = documented.find(
    entry => path.basename(entry.package) === folderOf(frontend.manifest.name),
  )?.pluginConfig?.dynamicPlugins?.frontend?.[scalprum.name];
  if (!wiring) throw new Error(`the README's dynamic-plugins.yaml does not wire ${scalprum.name}`);

  // 2. The host backend: public packages only, plus the Backstage packages the plugins share
  // (RHDH's backend provides these itself), and the RHDH frontend host.
  const hostPort = await freePort();
  const hostOrigin = `http://127.0.0.1:${hostPort}`;
  const backend = await createTestBackend({
    app,
    name: 'dynamic-plugins-backend',
    pgUrl,
    dependencies: {
      ...hostPeers,
      '@backstage/backend-defaults': installedVersion('@backstage/backend-defaults'),
      '@backstage/backend-dynamic-feature-service': DYNAMIC_FEATURE_SERVICE_VERSION,
      '@backstage/plugin-auth-backend': installedVersion('@backstage/plugin-auth-backend'),
      '@backstage/plugin-auth-backend-module-guest-provider': installedVersion(
        '@backstage/plugin-auth-backend-module-guest-provider',
      ),
      pg: '^8.11.0',
    },
    indexJs: `const { createBackend } = require('@backstage/backend-defaults');
const { dynamicPluginsFeatureLoader } = require('@backstage/backend-dynamic-feature-service');
const backend = createBackend();
backend.add(dynamicPluginsFeatureLoader);
backend.add(import('@backstage/plugin-auth-backend'));
backend.add(import('@backstage/plugin-auth-backend-module-guest-provider'));
backend.start();
`,
    config: {
      app: { baseUrl: hostOrigin },
      backend: { cors: { origin: hostOrigin, credentials: true } },
      // The page's user: the guest (a production-mode backend needs the explicit allowance).
      auth: { providers: { guest: { dangerouslyAllowOutsideDevelopment: true } } },
      dynamicPlugins: { rootDirectory: 'dynamic-plugins-root' },
    },
  });
  const host = buildScalprumHost(path.join(work, 'scalprum-host'));
  console.log(`Scalprum host built; it shares ${host.shared.join(', ')}`);

  // 3. Start it and call the plugins; the loader must say it loaded both from the plugins root.
  // 4. Meanwhile the host loads the frontend plugin against it.
  const output = await probeTestBackend({
    ...backend,
    whileRunning: async ({ baseUrl }) => {
      const site = await serveScalprumHost({
        dist: host.dist,
        remotes: { [scalprum.name]: scalprumDist },
        frontend: { [scalprum.name]: wiring },
        backendBaseUrl: baseUrl,
        entity: apiEntity,
        port: hostPort,
      });
      try {
        await checkFrontendInBrowser({ hostUrl: site.url, backendBaseUrl: baseUrl, wiring });
      } finally {
        await site.close();
      }
    },
  });
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
