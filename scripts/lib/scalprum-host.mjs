/*
 * A minimal Red Hat Developer Hub frontend host, for dynamic-plugin-test.mjs: it loads exported
 * frontend plugins (their `dist-scalprum` remotes) the way RHDH's app does and renders what a
 * `dynamic-plugins.yaml` entry wires — and nothing of this repository is bundled into it.
 *
 * What RHDH does and this host does too: a webpack module-federation host that provides the
 * shared singletons the RHDH CLI's remotes expect (the list is read from the pinned CLI itself,
 * tools/rhdh-cli, so the two cannot drift); `@scalprum/core` / `@scalprum/react-core` at the
 * versions RHDH's app uses load each plugin's `plugin-manifest.json` and its exposed modules;
 * every export that is a Backstage plugin joins a legacy `createApp` (its APIs come with it);
 * `dynamicRoutes` become routes with their `menuItem` in a navigation; `mountPoints` on
 * `entity.page.overview/cards` render inside an `EntityProvider` on an entity page, filtered by
 * their `config.if` (`isKind`, `isType`, `hasAnnotation`, as RHDH; any other condition is an
 * error here, so that the documented wiring cannot silently go untested); the navigation also
 * links to that entity page. Sign-in is the guest provider of the backend it is pointed at.
 *
 * What it leaves out: RHDH's theme, header, icons (a `menuItem.icon` is only passed through),
 * entity tabs and every other mount point.
 */
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort } from './freePort.mjs';
import { installedVersion, repoRoot, sh, writeYarnProject, yarnInstall } from './test-backend.mjs';

/** What RHDH's app (redhat-developer/rhdh packages/app) pins. */
const SCALPRUM_PACKAGES = {
  '@scalprum/core': '0.8.3',
  '@scalprum/react-core': '0.9.5',
  '@openshift/dynamic-plugin-sdk': '5.0.1',
};
/**
 * The legacy app's defaults (createApp), which no package of ours uses: the release of the
 * Backstage version the rest of the host is pinned to (it asks for core-app-api ^1.20.5).
 */
const APP_DEFAULTS_VERSION = '1.7.12';
/** The webpack release the host is built with (the one RHDH CLI's bundler resolves to here). */
const WEBPACK_VERSION = '5.105.4';

/** The module names the RHDH CLI's remotes consume as shared singletons (from the CLI itself). */
function rhdhSharedModules() {
  const cli = createRequire(path.join(repoRoot, 'tools/rhdh-cli/package.json'));
  return Object.keys(
    cli('@red-hat-developer-hub/cli/dist/lib/bundler/scalprumConfig.cjs.js').sharedModules,
  );
}

const HOST_SOURCE = `import { createElement as h, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Link, Route } from 'react-router-dom';
import { createApp } from '@backstage/app-defaults';
import { AppRouter, FlatRoutes } from '@backstage/core-app-api';
import { SignInPage } from '@backstage/core-components';
import { EntityProvider } from '@backstage/plugin-catalog-react';
import { initSharedScope, processManifest } from '@scalprum/core';
import { ScalprumProvider, useScalprum } from '@scalprum/react-core';

const { apps, frontend, entity } = window.__SCALPRUM_HOST__;
const DEFAULT_MODULE = 'PluginRoot';
const ENTITY_CARDS = 'entity.page.overview/cards';

// RHDH's test for "this export is a Backstage plugin" (DynamicRoot.tsx).
const isBackstagePlugin = value => {
  const prototype = value ? Object.getPrototypeOf(value) : undefined;
  return prototype !== undefined && prototype !== null &&
    ['getId', 'getApis', 'getFeatureFlags', 'provide', 'routes', 'externalRoutes']
      .every(field => field in prototype);
};

const CONDITIONS = {
  isKind: (kind, e) => e.kind.toLowerCase() === String(kind).toLowerCase(),
  isType: (type, e) => [].concat(type).includes(e.spec?.type),
  hasAnnotation: (name, e) => Boolean(e.metadata.annotations?.[name]),
};
function matches(condition, e) {
  const entries = Object.entries(condition ?? {});
  return entries.every(([combinator, list]) => {
    const results = list.map(item => Object.entries(item).every(([name, arg]) => {
      if (!CONDITIONS[name]) throw new Error('unsupported mount point condition ' + name);
      return CONDITIONS[name](arg, e);
    }));
    if (combinator === 'allOf') return results.every(Boolean);
    if (combinator === 'anyOf') return results.some(Boolean);
    if (combinator === 'oneOf') return results.filter(Boolean).length === 1;
    throw new Error('unsupported mount point combinator ' + combinator);
  });
}

async function loadWiring(pluginStore) {
  const modules = {};
  const load = async (scope, module = DEFAULT_MODULE) => {
    const key = scope + '#' + module;
    modules[key] ??= (async () => {
      if (!apps[scope]) throw new Error('no dynamic plugin with the scalprum name ' + scope);
      await processManifest(apps[scope].manifestLocation, scope, module);
      return pluginStore.getExposedModule(scope, module);
    })();
    return modules[key];
  };
  const component = async (scope, module, importName = 'default') => {
    const exported = (await load(scope, module))[importName];
    if (exported === undefined) {
      throw new Error(scope + ': module ' + (module ?? DEFAULT_MODULE) + ' exports no ' + importName);
    }
    return exported;
  };
  const routes = [];
  const cards = [];
  for (const [scope, wiring] of Object.entries(frontend)) {
    for (const route of wiring.dynamicRoutes ?? []) {
      routes.push({ ...route, Component: await component(scope, route.module, route.importName) });
    }
    for (const mount of wiring.mountPoints ?? []) {
      const Component = await component(scope, mount.module, mount.importName);
      if (mount.mountPoint === ENTITY_CARDS) cards.push({ ...mount, Component });
    }
  }
  const plugins = (await Promise.all(Object.values(modules)))
    .flatMap(module => Object.values(module))
    .filter(isBackstagePlugin);
  return { routes, cards, plugins };
}

function EntityPage({ cards }) {
  const shown = cards.filter(card => matches(card.config?.if, entity));
  return h(EntityProvider, { entity },
    h('main', { 'aria-label': 'Entity overview' },
      h('h1', null, entity.metadata.name),
      shown.map((card, i) => h(card.Component, { key: i, ...card.config?.props }))));
}

function DynamicRoot() {
  const { pluginStore } = useScalprum();
  const [state, setState] = useState();
  useEffect(() => {
    loadWiring(pluginStore).then(
      ({ routes, cards, plugins }) => {
        const app = createApp({
          plugins,
          components: {
            SignInPage: props => h(SignInPage, { ...props, providers: ['guest'] }),
          },
        });
        const { namespace, name } = entity.metadata;
        const nav = h('nav', { 'aria-label': 'Host navigation' },
          routes.filter(r => r.menuItem).map(r =>
            h(Link, { key: r.path, to: r.path, 'data-icon': r.menuItem.icon }, r.menuItem.text)),
          h(Link, { key: 'entity', to: '/catalog/' + namespace + '/' + entity.kind.toLowerCase() + '/' + name }, 'Entity ' + name));
        const Root = app.createRoot(h(AppRouter, null, nav, h(FlatRoutes, null,
          ...routes.map(r => h(Route, { key: r.path, path: r.path, element: h(r.Component, r.config?.props) })),
          h(Route, { key: 'entity', path: '/catalog/:namespace/:kind/:name', element: h(EntityPage, { cards }) }),
        )));
        setState({ Root });
      },
      error => setState({ error }),
    );
  }, [pluginStore]);
  if (!state) return h('p', null, 'Loading dynamic plugins');
  if (state.error) return h('p', { role: 'alert' }, 'Dynamic plugins failed: ' + state.error.message);
  return h(state.Root);
}

await initSharedScope();
createRoot(document.getElementById('root')).render(
  h(ScalprumProvider, {
    config: apps,
    api: {},
    pluginSDKOptions: {
      pluginLoaderOptions: {
        // As RHDH: the scripts are served next to the manifest.
        transformPluginManifest: manifest => ({
          ...manifest,
          loadScripts: manifest.loadScripts.map(script =>
            new URL(script, apps[manifest.name].manifestLocation).toString()),
        }),
      },
    },
  }, h(DynamicRoot)),
);
`;

const BUILD_SOURCE = `import path from 'node:path';
import webpack from 'webpack';

const shared = JSON.parse(process.argv[2]);
const compiler = webpack({
  mode: 'production',
  context: process.cwd(),
  entry: './src/index.js',
  devtool: false,
  output: {
    path: path.resolve('dist'),
    publicPath: '/',
    filename: 'static/host.js',
    chunkFilename: 'static/[name].[contenthash:8].js',
  },
  experiments: { topLevelAwait: true },
  module: {
    rules: [
      { test: /\\.m?js$/, resolve: { fullySpecified: false } },
      { test: /\\.(svg|png|woff2?|ttf|eot)$/, type: 'asset/resource' },
    ],
  },
  performance: { hints: false },
  // A test page: minifying the shared libraries would cost minutes of CPU for nothing.
  optimization: { minimize: false },
  plugins: [
    new webpack.container.ModuleFederationPlugin({
      name: 'scalprumHost',
      shared: Object.fromEntries(
        shared.map(name => [name, { singleton: true, requiredVersion: '*', eager: true }]),
      ),
    }),
  ],
});
compiler.run((error, stats) => {
  if (error || stats.hasErrors()) {
    console.error(error ?? stats.toString({ all: false, errors: true }));
    process.exit(1);
  }
  console.log(stats.toString({ all: false, assets: false, warnings: false, timings: true }));
  compiler.close(() => undefined);
});
`;

/**
 * Writes, installs and builds the host into `dir` (public packages only; `dir/dist` holds the
 * bundle). Returns the shared modules it provides.
 */
export function buildScalprumHost(dir) {
  const backstage = [
    '@backstage/core-app-api',
    '@backstage/core-components',
    '@backstage/core-plugin-api',
    '@backstage/frontend-plugin-api',
    '@backstage/plugin-catalog-react',
    '@backstage/theme',
    '@backstage/ui',
    '@backstage/version-bridge',
    '@material-ui/core',
    '@material-ui/styles',
  ];
  writeYarnProject({
    dir,
    name: 'scalprum-host',
    // The host only reads its node_modules (webpack writes to dist/): safe to hard-link.
    hardLinks: true,
    dependencies: {
      ...Object.fromEntries(
        [...backstage, 'react', 'react-dom', 'react-router', 'react-router-dom'].map(name => [
          name,
          installedVersion(name),
        ]),
      ),
      '@backstage/app-defaults': APP_DEFAULTS_VERSION,
      ...SCALPRUM_PACKAGES,
      webpack: WEBPACK_VERSION,
    },
  });
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src/index.js'), HOST_SOURCE);
  fs.writeFileSync(path.join(dir, 'build.mjs'), BUILD_SOURCE);
  yarnInstall(dir);
  // Shared as RHDH shares them: every singleton of the CLI's list the host has (the rest, such
  // as MUI 5 and emotion, no remote of ours uses; a remote falls back to its own copy).
  const hostRequire = createRequire(path.join(dir, 'package.json'));
  const shared = rhdhSharedModules().filter(name => {
    try {
      hostRequire.resolve(name);
      return true;
    } catch {
      return false;
    }
  });
  sh(process.execPath, ['build.mjs', JSON.stringify(shared)], { cwd: dir });
  fs.copyFileSync(
    hostRequire.resolve('@backstage/ui/css/styles.css'),
    path.join(dir, 'dist/static/backstage-ui.css'),
  );
  return { dist: path.join(dir, 'dist'), shared };
}

const CONTENT_TYPES = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.html': 'text/html',
  '.json': 'application/json',
};

/**
 * Serves the built host and each plugin's `dist-scalprum` (at `/plugins/<scalprum name>/`, as
 * RHDH's scalprum backend does at `/api/scalprum/<name>/`) on 127.0.0.1; every other path gets the
 * host page with the app config and the wiring. `frontend` is the `dynamicPlugins.frontend`
 * object of the plugins' `pluginConfig`; `entity` is the entity the entity page shows; `port`
 * one chosen in advance (the backend's CORS config names the host's origin), else a free one.
 */
export async function serveScalprumHost({
  dist,
  remotes,
  frontend,
  backendBaseUrl,
  entity,
  port: chosenPort,
}) {
  const port = chosenPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const apps = Object.fromEntries(
    Object.keys(remotes).map(name => [
      name,
      { name, manifestLocation: `${url}/plugins/${name}/plugin-manifest.json` },
    ]),
  );
  const appConfig = [
    {
      context: 'scalprum-host',
      data: { app: { title: 'Scalprum host', baseUrl: url }, backend: { baseUrl: backendBaseUrl } },
    },
  ];
  const json = value => JSON.stringify(value).replace(/</g, '\\u003c');
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Scalprum host</title>
<link rel="stylesheet" href="/static/backstage-ui.css">
<script type="backstage.io/config">${json(appConfig)}</script>
<script>window.process = { env: {} }; window.__SCALPRUM_HOST__ = ${json({ apps, frontend, entity })};</script>
</head><body><div id="root"></div><script src="/static/host.js"></script></body></html>
`;
  const fileFor = pathname => {
    const plugin = /^\/plugins\/([^/]+)\/(.+)$/.exec(pathname);
    const [root, relative] =
      plugin && remotes[plugin[1]] ? [remotes[plugin[1]], plugin[2]] : [dist, pathname];
    const file = path.join(root, relative);
    return file.startsWith(root) && fs.existsSync(file) && fs.statSync(file).isFile()
      ? file
      : undefined;
  };
  const server = http.createServer((req, res) => {
    const file = fileFor(decodeURIComponent(new URL(req.url, url).pathname));
    if (file === undefined) {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(page);
      return;
    }
    res.writeHead(200, {
      'Content-Type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
    });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise(resolve => server.listen(port, '127.0.0.1', resolve));
  return { url, close: () => new Promise(resolve => server.close(resolve)) };
}
