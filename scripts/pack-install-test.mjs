#!/usr/bin/env node
/*
 * Proves the "installed into an existing Backstage backend" promise end to end:
 * 1. builds and packs the published plugin packages (`yarn pack`, as npm would publish them) and
 *    checks each tarball's manifest and files (scripts/lib/published-packages.mjs);
 * 2. creates a minimal Backstage backend in a temporary folder from public packages only, with
 *    the tarballs as its only link to this repository, and `backend.add(import(...))` for each;
 * 3. starts it on fresh PostgreSQL databases (so both plugins' migrations run from scratch),
 *    calls one portal route and the broker's `initialize`, checks the migrated tables, and waits
 *    for the catalog module's first full sync (it reads the portal's products with a service
 *    token, through discovery).
 *
 * Needs: BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING (yarn test sets it), network access
 * to the npm registry (or a warm Yarn cache). Usage: node scripts/pack-install-test.mjs [--keep]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkTarball, publishedPackages } from './lib/published-packages.mjs';
import {
  createTestBackend,
  installedVersion,
  probeTestBackend,
  repoRoot,
  shLocked,
} from './lib/test-backend.mjs';

const keep = process.argv.includes('--keep');
const pgUrl = process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING;
if (!pgUrl) {
  console.log(
    'pack-install: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set',
  );
  process.exit(0);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pack-install-'));
const tarballs = path.join(work, 'tarballs');
fs.mkdirSync(tarballs);

let failure;
try {
  // 1. Build and pack. `yarn pack` runs each package's prepack (publishConfig applied) and turns
  // workspace: ranges into real versions, exactly as a publish would.
  const tarballOf = {};
  for (const pkg of publishedPackages) {
    const out = path.join(tarballs, `${pkg.workspace.replace('@', '').replace('/', '-')}.tgz`);
    shLocked('sh', ['-c', `yarn backstage-cli package build && yarn pack --out '${out}'`], {
      cwd: path.join(repoRoot, pkg.dir),
    });
    tarballOf[pkg.workspace] = out;
    const problems = checkTarball(pkg, out);
    if (problems.length > 0)
      throw new Error(`${pkg.workspace} tarball:\n  ${problems.join('\n  ')}`);
    console.log(`${pkg.workspace}: tarball manifest and files OK`);
  }

  // 2. A minimal backend from public packages and the tarballs only.
  const backend = await createTestBackend({
    app: path.join(work, 'backend'),
    name: 'pack-install-backend',
    pgUrl,
    dependencies: {
      '@backstage/backend-defaults': installedVersion('@backstage/backend-defaults'),
      '@devportal/plugin-portal-backend': `file:${tarballOf['@devportal/plugin-portal-backend']}`,
      '@devportal/plugin-mcp-broker-backend': `file:${tarballOf['@devportal/plugin-mcp-broker-backend']}`,
      '@devportal/plugin-mcp-broker-backend-module-portal': `file:${
        tarballOf['@devportal/plugin-mcp-broker-backend-module-portal']
      }`,
      '@backstage/plugin-catalog-backend': installedVersion('@backstage/plugin-catalog-backend'),
      '@devportal/plugin-catalog-backend-module-portal': `file:${
        tarballOf['@devportal/plugin-catalog-backend-module-portal']
      }`,
      '@devportal/plugin-catalog-backend-module-mcp-broker': `file:${
        tarballOf['@devportal/plugin-catalog-backend-module-mcp-broker']
      }`,
      pg: '^8.11.0',
    },
    // The plugins depend on their common packages, backend-request-body and
    // backend-kubernetes-client by version; point those versions at their tarballs.
    resolutions: {
      '@devportal/plugin-portal-common': `file:${tarballOf['@devportal/plugin-portal-common']}`,
      '@devportal/plugin-mcp-broker-common': `file:${tarballOf['@devportal/plugin-mcp-broker-common']}`,
      '@devportal/plugin-mcp-broker-node': `file:${tarballOf['@devportal/plugin-mcp-broker-node']}`,
      '@devportal/backend-request-body': `file:${tarballOf['@devportal/backend-request-body']}`,
      '@devportal/backend-kubernetes-client': `file:${tarballOf['@devportal/backend-kubernetes-client']}`,
    },
    indexJs: `const { createBackend } = require('@backstage/backend-defaults');
const backend = createBackend();
backend.add(import('@devportal/plugin-portal-backend'));
backend.add(import('@devportal/plugin-mcp-broker-backend'));
backend.add(import('@devportal/plugin-mcp-broker-backend-module-portal'));
backend.add(import('@backstage/plugin-catalog-backend'));
backend.add(import('@devportal/plugin-catalog-backend-module-portal'));
backend.add(import('@devportal/plugin-catalog-backend-module-mcp-broker'));
backend.start();
`,
    config: {
      catalog: {
        providers: {
          portal: {
            schedule: {
              frequency: { hours: 1 },
              timeout: { minutes: 1 },
              initialDelay: { seconds: 1 },
            },
          },
        },
      },
    },
  });

  // 3. Start it and call the plugins.
  await probeTestBackend({
    ...backend,
    expectOutput: /Synchronised 0 Published API products of 0/,
  });
} catch (error) {
  failure = error;
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
if (failure) {
  console.error(`pack-install: FAILED: ${failure.message}`);
  console.log('pack-install: 0 passed, 1 failed');
  process.exit(1);
}
console.log('pack-install: 1 passed, 0 failed');
