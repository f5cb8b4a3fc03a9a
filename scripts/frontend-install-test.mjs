#!/usr/bin/env node
/*
 * Proves "installed into an existing Backstage app with `yarn add` and nothing else" for the
 * frontend plugin, as pack-install-test.mjs does for the backend plugins:
 * 1. builds and packs @devportal/plugin-portal and the published packages it depends on, and
 *    checks each tarball (scripts/lib/published-packages.mjs);
 * 2. creates a fresh app in a temporary folder — Backstage's new frontend system from public
 *    packages, the tarballs its only link to this repository — whose source names no plugin:
 *    it installs its plugins by feature discovery (`app.packages: all`), so `yarn add` is the
 *    whole installation; builds it for production;
 * 3. serves that build and opens it in headless Chromium: the portal's nav item and its page
 *    with its tabs render (no backend runs, so the page shows its error state);
 * 4. builds this repository's development app (packages/app) for production and checks that
 *    the bundle holds no trace of the development sign-in page (it must exist in development
 *    builds only; packages/app/src/modules/signIn).
 *
 * Needs network access to the npm registry (or a warm Yarn cache) and Chromium
 * (PORTAL_BROWSER_CHROMIUM or /usr/bin/chromium; `yarn test` provides it).
 * Usage: node scripts/frontend-install-test.mjs [--keep]
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { freePort } from './lib/freePort.mjs';
import { checkTarball, publishedFrontendPackages } from './lib/published-packages.mjs';
import { installedVersion, repoRoot, rootPkg, sh, shLocked } from './lib/test-backend.mjs';

const keep = process.argv.includes('--keep');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'frontend-install-'));

/** Backstage packages the app needs, at the versions this repository uses (Backstage 1.55). */
const BACKSTAGE = ['@backstage/cli', '@backstage/frontend-defaults', '@backstage/ui'];
/** Strings only the development sign-in page has (packages/app/src/modules/signIn). */
const DEV_SIGN_IN_MARKERS = ['Sign in (development)', 'devportal.devSignIn.user'];

/** The monorepo's resolutions (the Backstage 1.55 pins, registry work-arounds), paths made absolute. */
function resolutions() {
  return Object.fromEntries(
    Object.entries(rootPkg.resolutions).map(([name, range]) => {
      const local = /^(portal|link|file):(\.\.?\/.*)$/.exec(range);
      return [name, local ? `${local[1]}:${path.resolve(repoRoot, local[2])}` : range];
    }),
  );
}

/** The text of every JavaScript file a build emitted. */
function bundleText(dist) {
  const dir = path.join(dist, 'static');
  return fs
    .readdirSync(dir)
    .filter(file => file.endsWith('.js'))
    .map(file => fs.readFileSync(path.join(dir, file), 'utf8'))
    .join('\n');
}

/** Serves a built app (`index.html` for every path that is not a file) on 127.0.0.1. */
async function serve(dist) {
  const port = await freePort();
  const types = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };
  const server = http.createServer((req, res) => {
    const wanted = path.join(dist, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file =
      wanted.startsWith(dist) && fs.existsSync(wanted) && fs.statSync(wanted).isFile()
        ? wanted
        : path.join(dist, 'index.html');
    res.writeHead(200, {
      'Content-Type': types[path.extname(file)] ?? 'application/octet-stream',
    });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise(resolve => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

let failure;
try {
  // 1. Build and pack, as a publish would.
  const tarballs = path.join(work, 'tarballs');
  fs.mkdirSync(tarballs);
  const tarballOf = {};
  for (const pkg of publishedFrontendPackages) {
    const out = path.join(tarballs, `${pkg.workspace.replace('@', '').replace('/', '-')}.tgz`);
    shLocked('sh', ['-c', `yarn backstage-cli package build && yarn pack --out '${out}'`], {
      cwd: path.join(repoRoot, pkg.dir),
    });
    const problems = checkTarball(pkg, out);
    if (problems.length > 0)
      throw new Error(`${pkg.workspace} tarball:\n  ${problems.join('\n  ')}`);
    tarballOf[pkg.workspace] = out;
    console.log(`${pkg.workspace}: tarball manifest and files OK`);
  }

  // 2. A fresh app: public packages and the plugin's tarball; no plugin named in its source.
  const app = path.join(work, 'app');
  fs.mkdirSync(path.join(app, 'src'), { recursive: true });
  fs.cpSync(path.join(repoRoot, 'packages/app/public'), path.join(app, 'public'), {
    recursive: true,
  });
  fs.writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'frontend-install-app',
        version: '0.0.0',
        private: true,
        backstage: { role: 'frontend' },
        packageManager: rootPkg.packageManager,
        dependencies: {
          ...Object.fromEntries(BACKSTAGE.map(name => [name, installedVersion(name)])),
          '@devportal/plugin-portal': `file:${tarballOf['@devportal/plugin-portal']}`,
          react: '^18.0.2',
          'react-dom': '^18.0.2',
          'react-router-dom': '^6.30.2',
        },
        resolutions: {
          ...resolutions(),
          '@devportal/plugin-portal-common': `file:${tarballOf['@devportal/plugin-portal-common']}`,
          '@devportal/plugin-mcp-broker-common': `file:${
            tarballOf['@devportal/plugin-mcp-broker-common']
          }`,
        },
        dependenciesMeta: rootPkg.dependenciesMeta,
        browserslist: ['last 1 chrome version'],
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(app, '.yarnrc.yml'),
    'nodeLinker: node-modules\nenableTelemetry: false\nenableScripts: false\n',
  );
  fs.writeFileSync(path.join(app, 'yarn.lock'), '');
  fs.writeFileSync(
    path.join(app, 'app-config.yaml'),
    JSON.stringify({
      app: { title: 'Install test', baseUrl: 'http://127.0.0.1:3000', packages: 'all' },
      // Nothing listens there: the page can only render its error state.
      backend: { baseUrl: 'http://127.0.0.1:9' },
    }),
  );
  fs.writeFileSync(
    path.join(app, 'src/index.tsx'),
    `import ReactDOM from 'react-dom/client';
import { createApp } from '@backstage/frontend-defaults';
import '@backstage/ui/css/styles.css';

// No feature list: the app installs every frontend plugin among its dependencies.
const app = createApp();
ReactDOM.createRoot(document.getElementById('root')!).render(app.createRoot());
`,
  );
  sh('yarn', ['install'], {
    cwd: app,
    env: { ...process.env, YARN_ENABLE_IMMUTABLE_INSTALLS: 'false' },
  });
  sh('yarn', ['backstage-cli', 'package', 'build'], { cwd: app });
  const appBundle = bundleText(path.join(app, 'dist'));
  for (const marker of ['plugin.portal.api', 'plugin.portal.mcp-broker']) {
    if (!appBundle.includes(marker))
      throw new Error(`the app's bundle lacks the portal's ${marker}`);
  }
  console.log("the fresh app's production bundle carries the portal plugin");

  // 3. The portal page in that app, in a real browser.
  const site = await serve(path.join(app, 'dist'));
  const browser = await chromium.launch({
    executablePath: process.env.PORTAL_BROWSER_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${site.url}/portal`);
    await page.getByRole('link', { name: 'API portal' }).first().waitFor();
    const tabs = page.getByRole('navigation', { name: 'Content navigation' });
    for (const tab of ['API products', 'My keys', 'Approvals', 'Policies']) {
      await tabs.getByRole('link', { name: tab }).waitFor();
    }
    console.log('the fresh app serves the portal page at /portal (nav item and tabs rendered)');
  } finally {
    await browser.close();
    site.close();
  }

  // 4. The development app's production bundle: no development sign-in.
  sh('yarn', ['workspace', 'app', 'build'], { cwd: repoRoot });
  const devAppBundle = bundleText(path.join(repoRoot, 'packages/app/dist'));
  for (const marker of DEV_SIGN_IN_MARKERS) {
    if (devAppBundle.includes(marker))
      throw new Error(
        `packages/app's production bundle contains the development sign-in ("${marker}")`,
      );
  }
  if (!devAppBundle.includes('oauth2Proxy'))
    throw new Error("packages/app's production bundle lacks its oauth2-proxy sign-in");
  console.log("packages/app's production bundle has no development sign-in page");
} catch (error) {
  failure = error;
} finally {
  fs.rmSync(path.join(repoRoot, 'packages/app/dist'), { recursive: true, force: true });
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
if (failure) {
  console.error(`frontend-install: FAILED: ${failure.message}`);
  console.log('frontend-install: 0 passed, 1 failed');
  process.exit(1);
}
console.log('frontend-install: 1 passed, 0 failed');
