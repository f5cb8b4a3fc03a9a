/*
 * Preload (`node --require`) for an end-to-end test's backend process in which one plugin's
 * routes are mounted late: the start-up race that made RBAC skip a plugin's conditional policies.
 * Backstage's root router listens before every plugin has mounted its routes, so a request to a
 * plugin that has not mounted yet is answered 404; on PostgreSQL, where each plugin's start-up
 * (its database, its key store) takes longer, RBAC's read of the portal's permission metadata
 * sometimes came first (seen in CI, never on an idle machine).
 *
 * This holds back the `/api/<LATE_ROUTE_PLUGIN>` registration until the first request for any
 * path of that plugin has been answered (404), then registers it and prints `late-route: …`
 * once. The order is forced by an event, not by a delay, so the race happens on every run: with
 * RBAC as published and nothing else, RBAC's metadata read is that first request. Loaded only by
 * the test that asks for it; never by the development or production backend.
 */
'use strict';

const { DefaultRootHttpRouter } = require('@backstage/backend-defaults/rootHttpRouter');

const pluginId = process.env.LATE_ROUTE_PLUGIN;
if (!pluginId) throw new Error('lateRouteRegistration.cjs needs LATE_ROUTE_PLUGIN');
const routePath = `/api/${pluginId}`;

const use = DefaultRootHttpRouter.prototype.use;
const handler = DefaultRootHttpRouter.prototype.handler;
/** @type {{ router: object, handler: unknown } | undefined} */
let held;
/** @type {string | undefined} */
let firstRequest;
let registered = false;

function register() {
  if (registered || !held || firstRequest === undefined) return;
  registered = true;
  use.call(held.router, routePath, held.handler);
  process.stdout.write(
    `late-route: ${routePath} registered after ${firstRequest} was answered 404\n`,
  );
}

DefaultRootHttpRouter.prototype.use = function useHeld(path, routeHandler) {
  if (path === routePath && !registered) {
    held = { router: this, handler: routeHandler };
    register();
    return;
  }
  use.call(this, path, routeHandler);
};

DefaultRootHttpRouter.prototype.handler = function heldHandler() {
  const inner = handler.call(this);
  return (req, res, next) => {
    if (!registered && firstRequest === undefined && req.url.startsWith(`${routePath}/`)) {
      firstRequest = req.url;
      res.on('finish', register);
    }
    return inner(req, res, next);
  };
};
