#!/usr/bin/env node
// Yarn builds native dependencies (better-sqlite3 here: no prebuilt binary can be downloaded)
// with the `node-gyp` it injects; root `resolutions` send every `node-gyp` to this package.
// Two things a fresh machine needs, with nothing exported:
//   - a node-gyp that runs on Node 20 (13.x's undici needs Node >= 22.19): node-gyp 11.5.0;
//   - headers without a download (only the npm registry is reachable): when the Node running
//     this has its own headers installed beside it (`<prefix>/include/node`, as Debian's and the
//     official tarballs do) and they are of its exact version, build against them.
// An explicit `npm_config_nodedir` (or `--nodedir`) still wins; without local headers node-gyp
// downloads them as usual.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function localHeadersDir() {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  let header;
  try {
    header = fs.readFileSync(path.join(prefix, 'include', 'node', 'node_version.h'), 'utf8');
  } catch {
    return undefined;
  }
  const part = name => header.match(new RegExp(`#define NODE_${name}_VERSION (\\d+)`))?.[1];
  const version = `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
  return version === process.versions.node ? prefix : undefined;
}

const explicit =
  process.env.npm_config_nodedir ?? process.argv.find(arg => arg.startsWith('--nodedir'));
if (explicit === undefined) {
  const dir = localHeadersDir();
  if (dir !== undefined) process.env.npm_config_nodedir = dir;
}
require('node-gyp-upstream/bin/node-gyp.js');
