/*
 * Preload (`node --require bench/lib/requestPieces.cjs`) for the development backend: the
 * wall time of each piece of a request, per call, so that a request's time can be split
 * into token verification, on-behalf-of token minting, the RBAC policy, the store and the
 * response. It wraps methods of the installed Backstage packages (their dist files, by
 * path), the portal's DatabasePortalStore when it loads, Express's res.json and the HTTP
 * server's request events. Benchmark use only: the wrappers cost a few microseconds per
 * call and reach into package internals that may move in another Backstage release (a
 * missing file fails the start loudly rather than measuring nothing).
 *
 * SIGUSR1 clears what was recorded (after a warm-up) and acknowledges by creating
 * `<REQUEST_PIECES_OUT>.reset`; SIGUSR2 writes a JSON summary
 * `{ [piece]: { n, meanMs, p50Ms } }` to the file named by REQUEST_PIECES_OUT.
 */
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const Module = require('node:module');
const path = require('node:path');
const { performance, PerformanceObserver } = require('node:perf_hooks');

const nodeModules = path.resolve(__dirname, '..', '..', 'node_modules');
const defaults = path.join(nodeModules, '@backstage/backend-defaults/dist/entrypoints');
const load = relative => require(path.join(defaults, relative));

const recorded = new Map();
let measuring = false;
function record(piece, ms) {
  let list = recorded.get(piece);
  if (!list) recorded.set(piece, (list = []));
  list.push(ms);
}

/** Wraps `proto[name]` (async) to record its wall time under `piece(this)`. */
function timeAsync(proto, name, piece) {
  const original = proto[name];
  if (typeof original !== 'function') throw new Error(`requestPieces: no method ${name} to wrap`);
  proto[name] = async function timed(...args) {
    const started = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      record(typeof piece === 'function' ? piece(this) : piece, performance.now() - started);
    }
  };
}

// Authentication: verifying tokens and minting the plugin-to-plugin tokens.
const { DefaultAuthService } = load('auth/DefaultAuthService.cjs.js');
timeAsync(
  DefaultAuthService.prototype,
  'authenticate',
  auth => `auth.authenticate (in ${auth.pluginId})`,
);
timeAsync(
  DefaultAuthService.prototype,
  'getPluginRequestToken',
  auth => `auth.getPluginRequestToken (in ${auth.pluginId})`,
);
const { UserTokenHandler } = load('auth/user/UserTokenHandler.cjs.js');
timeAsync(UserTokenHandler.prototype, 'verifyToken', 'user token verification (ES256 verify)');
const { DefaultPluginTokenHandler } = load('auth/plugin/PluginTokenHandler.cjs.js');
timeAsync(
  DefaultPluginTokenHandler.prototype,
  'verifyToken',
  'plugin token check (ES256 verify when it is one)',
);
timeAsync(
  DefaultPluginTokenHandler.prototype,
  'issueToken',
  'plugin token minting (importJWK + ES256 sign)',
);
const { CachedUserInfoService } = load('userInfo/CachedUserInfoService.cjs.js');
timeAsync(CachedUserInfoService.prototype, 'getUserInfo', 'userInfo.getUserInfo (5 s cache)');
const { DefaultAuditorService } = load('auditor/DefaultAuditorService.cjs.js');
timeAsync(DefaultAuditorService.prototype, 'createEvent', 'auditor.createEvent');
timeAsync(DefaultAuditorService.prototype, 'log', 'auditor.log');

// The permission round trip, seen from the calling plugin and inside the RBAC plugin.
const { ServerPermissionClient } = require(
  path.join(nodeModules, '@backstage/plugin-permission-node/dist/ServerPermissionClient.cjs.js'),
);
timeAsync(
  ServerPermissionClient.prototype,
  'authorize',
  'permissions.authorize (token + HTTP round trip)',
);
const { PermissionClient } = require(
  path.join(nodeModules, '@backstage/plugin-permission-common/dist/PermissionClient.cjs.js'),
);
timeAsync(
  PermissionClient.prototype,
  'authorize',
  'PermissionClient.authorize (the HTTP round trip)',
);
const { RBACPermissionPolicy } = require(
  path.join(
    nodeModules,
    '@backstage-community/plugin-rbac-backend/dist/policies/permission-policy.cjs.js',
  ),
);
timeAsync(
  RBACPermissionPolicy.prototype,
  'handle',
  'RBAC policy.handle (one per permission, run concurrently)',
);

// The portal's store, when the backend loads the plugin.
const originalLoad = Module._load;
let storeWrapped = false;
Module._load = function loadAndWrap(...args) {
  const loaded = originalLoad.apply(this, args);
  const store = loaded && loaded.DatabasePortalStore;
  if (!storeWrapped && store && store.prototype && typeof store.prototype.listKeys === 'function') {
    storeWrapped = true;
    timeAsync(store.prototype, 'listKeys', 'portal store.listKeys');
  }
  return loaded;
};

// Express: from the request event to the handler, and from res.json to the last byte.
const express = require(path.join(nodeModules, 'express'));
const { DefaultHttpAuthService } = load('httpAuth/httpAuthServiceFactory.cjs.js');
const originalCredentials = DefaultHttpAuthService.prototype.credentials;
DefaultHttpAuthService.prototype.credentials = function credentials(req, ...rest) {
  if (req.requestPiecesStart !== undefined && !req.requestPiecesHandled) {
    req.requestPiecesHandled = true;
    record(
      `middleware: request event → route handler (${req.baseUrl})`,
      performance.now() - req.requestPiecesStart,
    );
  }
  return originalCredentials.call(this, req, ...rest);
};
const originalJson = express.response.json;
express.response.json = function json(...args) {
  const started = performance.now();
  const where = this.req.baseUrl;
  this.once('finish', () =>
    record(`response: res.json → last byte written (${where})`, performance.now() - started),
  );
  try {
    return originalJson.apply(this, args);
  } finally {
    record(`response: res.json synchronous part (${where})`, performance.now() - started);
  }
};
const originalEmit = http.Server.prototype.emit;
http.Server.prototype.emit = function emit(event, req, res) {
  if (event === 'connection' && measuring) record('new TCP connections accepted', 0);
  if (event === 'request') {
    const started = performance.now();
    req.requestPiecesStart = started;
    const route = `${req.method} ${req.url.split('?')[0].split('/').slice(0, 3).join('/')}`;
    res.once('finish', () =>
      record(`server: request event → response finished (${route})`, performance.now() - started),
    );
  }
  return originalEmit.apply(this, arguments);
};

// Garbage collection pauses of the main thread.
const gcKinds = {
  1: 'minor (scavenge)',
  2: 'major (mark-compact)',
  4: 'incremental marking',
  8: 'weak callbacks',
};
new PerformanceObserver(list => {
  if (!measuring) return;
  for (const entry of list.getEntries()) {
    const kind = entry.detail?.kind ?? entry.kind;
    record(`GC pause: ${gcKinds[kind] ?? kind}`, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR1', () => {
  recorded.clear();
  measuring = true;
  // Signals arrive asynchronously: the caller waits for this file before its measured requests,
  // or the first of them could be recorded and then cleared.
  fs.writeFileSync(`${process.env.REQUEST_PIECES_OUT}.reset`, '');
});
process.on('SIGUSR2', () => {
  const summary = {};
  for (const [piece, list] of recorded) {
    const sorted = [...list].sort((a, b) => a - b);
    summary[piece] = {
      n: list.length,
      meanMs: list.reduce((sum, ms) => sum + ms, 0) / list.length,
      p50Ms: sorted[Math.floor(sorted.length / 2)],
    };
  }
  fs.writeFileSync(process.env.REQUEST_PIECES_OUT, JSON.stringify(summary));
});
