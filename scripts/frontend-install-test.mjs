#!/usr/bin/env node
/*
 * Proves "installed into an existing Backstage app with `yarn add` and its feature list" for the
 * frontend plugin, as pack-install-test.mjs does for the backend plugins, at the least cost that
 * still exercises the published package (a full `backstage-cli` app and its production build cost
 * over four minutes on two cores; this costs well under two):
 * 1. builds and packs @devportal/plugin-portal and the published packages it depends on, and
 *    checks each tarball (scripts/lib/published-packages.mjs);
 * 2. creates a fresh app in a temporary folder from public packages (Backstage's new frontend
 *    system) with the tarballs as its only link to this repository; its one line about the plugin
 *    is the feature list, `createApp({ features: [portalPlugin] })`; installs it;
 * 3. type-checks the app against the installed package's published types (dist/*.d.ts);
 * 4. bundles it with esbuild (the package's published ES modules, production mode), serves the
 *    bundle and opens it in headless Chromium: the portal's nav item and its page with its tabs
 *    render (no backend runs, so the page's lists show their error state).
 * The development app's own production bundle and its development sign-in page are checked by
 * packages/app/src/modules/signIn/productionBundle.test.ts.
 *
 * Needs network access to the npm registry (or a warm Yarn cache) and Chromium
 * (PORTAL_BROWSER_CHROMIUM or /usr/bin/chromium; `yarn test` provides it).
 * Usage: node scripts/frontend-install-test.mjs [--keep]
 */
import { build } from 'esbuild';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { freePort } from './lib/freePort.mjs';
import { checkTarball, publishedFrontendPackages } from './lib/published-packages.mjs';
import {
  installedVersion,
  repoRoot,
  sh,
  shLocked,
  writeYarnProject,
  yarnInstall,
} from './lib/test-backend.mjs';

const keep = process.argv.includes('--keep');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'frontend-install-'));
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;

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
  return { port, url: `http://127.0.0.1:${port}`, close: () => server.close() };
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
    console.log(`${pkg.workspace}: tarball manifest and files OK (${elapsed()})`);
  }

  // 2. A fresh app: public packages and the tarballs; the plugin named once, in the feature list.
  const app = path.join(work, 'app');
  writeYarnProject({
    dir: app,
    name: 'frontend-install-app',
    // The app only reads its node_modules (type check, bundle): safe to hard-link.
    hardLinks: true,
    dependencies: {
      '@backstage/frontend-defaults': installedVersion('@backstage/frontend-defaults'),
      '@backstage/ui': installedVersion('@backstage/ui'),
      '@devportal/plugin-portal': `file:${tarballOf['@devportal/plugin-portal']}`,
      '@types/react': installedVersion('@types/react'),
      '@types/react-dom': installedVersion('@types/react-dom'),
      react: installedVersion('react'),
      'react-dom': installedVersion('react-dom'),
      'react-router-dom': installedVersion('react-router-dom'),
    },
    resolutions: {
      '@devportal/plugin-portal-common': `file:${tarballOf['@devportal/plugin-portal-common']}`,
      '@devportal/plugin-mcp-broker-common': `file:${tarballOf['@devportal/plugin-mcp-broker-common']}`,
    },
  });
  fs.mkdirSync(path.join(app, 'src'));
  fs.writeFileSync(
    path.join(app, 'src/index.tsx'),
    `import ReactDOM from 'react-dom/client';
import { createApp } from '@backstage/frontend-defaults';
import portalPlugin from '@devportal/plugin-portal';
import '@backstage/ui/css/styles.css';

const app = createApp({ features: [portalPlugin] });
ReactDOM.createRoot(document.getElementById('root')!).render(app.createRoot());
`,
  );
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'bundler',
        jsx: 'react-jsx',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
        lib: ['DOM', 'DOM.Iterable', 'ES2022'],
      },
      include: ['src'],
    }),
  );
  yarnInstall(app);
  console.log(`the fresh app installed the tarballs (${elapsed()})`);

  // 3. Its source type-checks against the published types.
  sh(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', app]);
  console.log(`the fresh app type-checks against the published types (${elapsed()})`);

  // 4. Bundled in production mode, served, opened in a real browser.
  const dist = path.join(app, 'dist');
  await build({
    entryPoints: [path.join(app, 'src/index.tsx')],
    absWorkingDir: app,
    bundle: true,
    outdir: path.join(dist, 'static'),
    format: 'esm',
    splitting: true,
    minify: true,
    logLevel: 'warning',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    // Code that reads other process.env keys (the CLI's bundler replaces them) finds them unset.
    banner: { js: 'var process = globalThis.process ?? { env: {} };' },
    loader: { '.svg': 'file', '.png': 'file', '.woff': 'file', '.woff2': 'file', '.ttf': 'file' },
  });
  const site = await serve(dist);
  const appConfig = [
    {
      context: 'install-test',
      data: {
        app: { title: 'Install test', baseUrl: site.url },
        // Nothing listens there: the page can only render its error state.
        backend: { baseUrl: 'http://127.0.0.1:9' },
      },
    },
  ];
  fs.writeFileSync(
    path.join(dist, 'index.html'),
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Install test</title>
<link rel="stylesheet" href="/static/index.css">
<script type="backstage.io/config">${JSON.stringify(appConfig)}</script>
</head><body><div id="root"></div><script type="module" src="/static/index.js"></script></body></html>
`,
  );
  const browser = await chromium.launch({
    executablePath: process.env.PORTAL_BROWSER_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', error => pageErrors.push(error.message));
    page.setDefaultTimeout(30_000);
    await page.goto(`${site.url}/portal`);
    try {
      // The app's default sign-in: a guest. Without a backend it offers the legacy guest
      // identity in a confirm dialog, which a person accepts.
      page.once('dialog', dialog => dialog.accept());
      await page.getByRole('button', { name: 'Enter' }).click();
      await page.getByRole('link', { name: 'API portal' }).first().waitFor();
      const tabs = page.getByRole('navigation', { name: 'Content navigation' });
      for (const tab of ['API products', 'My keys', 'Approvals', 'Policies']) {
        await tabs.getByRole('link', { name: tab }).waitFor();
      }
    } catch (error) {
      throw new Error(
        `${error.message.split('\n')[0]}\npage errors: ${pageErrors.join('; ') || 'none'}`,
      );
    }
    console.log(
      `the fresh app serves the portal page at /portal: nav item and tabs rendered (${elapsed()})`,
    );
  } finally {
    await browser.close();
    site.close();
  }
} catch (error) {
  failure = error;
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
if (failure) {
  console.error(`frontend-install: FAILED: ${failure.message}`);
  console.log('frontend-install: 0 passed, 1 failed');
  process.exit(1);
}
console.log(`frontend-install: 1 passed, 0 failed (${elapsed()})`);
