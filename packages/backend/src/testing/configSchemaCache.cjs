/*
 * Preload (`node --require`) for the backend processes tests start: keeps the backend's config
 * schema between starts. At every start the root logger (backend-defaults) collects the schema
 * of every package to know which config values are secrets, and the workspace plugins declare
 * theirs in TypeScript (`config.d.ts`), which @backstage/config-loader compiles with the
 * TypeScript compiler each time: about 3 s of CPU a start, and a test run starts well over a
 * hundred backends on two cores. Here the first start of a given source state saves the
 * collected schema (config-loader's own serialized form) and later ones load that instead of
 * compiling it again; config-loader then builds the same validator from it either way.
 *
 * The saved schema is keyed by everything the collection reads: the package list it is asked
 * for, yarn.lock (the dependencies' schemas) and every workspace package's package.json and
 * schema file. A change to any of them makes a new key, so a stale schema is never used. Loaded
 * only by startBackendProcess; never by the development or production backend.
 */
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { resolvePackagePath } = require('@backstage/backend-plugin-api');

const repoRoot = resolvePackagePath('backend', '..', '..');
/** Where the schemas are kept: one file per source state, named by its key. */
const cacheDir = path.join(repoRoot, 'node_modules', '.cache', 'backend-config-schema');
/** The folders of the workspace packages (the root package.json's `workspaces`). */
const WORKSPACE_FOLDERS = ['packages', 'plugins', 'tools'];

// The config-loader the root logger uses: the one backend-defaults resolves.
const configLoader = require(
  require.resolve('@backstage/config-loader', {
    paths: [path.dirname(require.resolve('@backstage/backend-defaults/package.json'))],
  }),
);
const loadConfigSchema = configLoader.loadConfigSchema;

/** A digest of everything collecting the schema of `dependencies` reads. */
function sourceKey(dependencies) {
  const hash = crypto.createHash('sha256');
  hash.update(JSON.stringify(dependencies));
  hash.update(fs.readFileSync(path.join(repoRoot, 'yarn.lock')));
  for (const folder of WORKSPACE_FOLDERS) {
    for (const name of fs.readdirSync(path.join(repoRoot, folder)).sort()) {
      const packageJson = path.join(repoRoot, folder, name, 'package.json');
      if (!fs.existsSync(packageJson)) continue;
      const text = fs.readFileSync(packageJson, 'utf8');
      hash.update(`${folder}/${name}\n${text}`);
      const { configSchema } = JSON.parse(text);
      if (typeof configSchema === 'string') {
        hash.update(fs.readFileSync(path.join(repoRoot, folder, name, configSchema)));
      }
    }
  }
  return hash.digest('hex');
}

/** The file the schema of `dependencies` is kept in for the current sources. */
function cacheFile(dependencies) {
  return path.join(cacheDir, `${sourceKey(dependencies)}.json`);
}

configLoader.loadConfigSchema = async function cachedLoadConfigSchema(options) {
  if (!('dependencies' in options)) return loadConfigSchema(options);
  const file = cacheFile(options.dependencies);
  let serialized;
  try {
    serialized = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // Not saved yet (or half written by a start that died): collected below.
  }
  if (serialized !== undefined) {
    return loadConfigSchema({
      serialized,
      noUndeclaredProperties: options.noUndeclaredProperties,
    });
  }
  // A package whose schema does not compile is reported (onSchemaError) at every start: such a
  // schema is not kept.
  let schemaErrors = false;
  const schema = await loadConfigSchema({
    ...options,
    onSchemaError: error => {
      schemaErrors = true;
      options.onSchemaError?.(error);
    },
  });
  if (schemaErrors) return schema;
  // Written aside and renamed: a backend starting meanwhile reads the whole file or none.
  fs.mkdirSync(cacheDir, { recursive: true });
  const partial = `${file}.${process.pid}`;
  fs.writeFileSync(partial, JSON.stringify(schema.serialize()));
  fs.renameSync(partial, file);
  return schema;
};

// For its test (configSchemaCache.test.ts).
module.exports = { cacheFile };
