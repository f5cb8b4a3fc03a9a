/*
 * Preload (`node --require`) for an end-to-end test's backend process whose stop is held at
 * one point: after every plugin's shutdown hooks have run and before the HTTP server closes.
 * Backstage stops in that order (root before-shutdown hooks, then every plugin's shutdown hooks,
 * then the root shutdown hooks, one of which closes the server), so between the last two a
 * request still reaches a plugin that has stopped. A test can then ask the replica what a client
 * meets there, for as long as it needs, instead of hoping a request lands in that gap.
 *
 * It prints `held-stop: …` when the gap begins and lets the stop go on when the process gets
 * SIGUSR2. Loaded only by the test that asks for it; never by the development or production
 * backend.
 */
'use strict';

const path = require('node:path');

// The root lifecycle's implementation is not among the package's exports; the backend loads the
// same file (by this absolute path) through `@backstage/backend-defaults/rootLifecycle`.
const { BackendLifecycleImpl } = require(
  path.join(
    path.dirname(require.resolve('@backstage/backend-defaults/package.json')),
    'dist/entrypoints/rootLifecycle/rootLifecycleServiceFactory.cjs.js',
  ),
);

// Listening from the start: SIGUSR2 would otherwise end the process (Node's default).
const released = new Promise(resolve => process.once('SIGUSR2', resolve));
const shutdown = BackendLifecycleImpl.prototype.shutdown;
BackendLifecycleImpl.prototype.shutdown = async function heldShutdown() {
  process.stdout.write('held-stop: every plugin has stopped; the server still listens\n');
  await released;
  return shutdown.call(this);
};
