/*
 * The packages this repository publishes, and the checks every packed tarball must pass before
 * it can be installed into someone else's Backstage (see issue #10 and each plugin's README).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './test-backend.mjs';

/** The published workspaces (in dependency order). */
export const publishedPackages = [
  {
    workspace: '@devportal/backend-kubernetes-client',
    dir: 'packages/backend-kubernetes-client',
    role: 'node-library',
  },
  {
    workspace: '@devportal/backend-request-body',
    dir: 'packages/backend-request-body',
    role: 'node-library',
  },
  {
    workspace: '@devportal/plugin-portal-common',
    dir: 'plugins/portal-common',
    role: 'common-library',
    pluginId: 'portal',
  },
  {
    workspace: '@devportal/plugin-portal-backend',
    dir: 'plugins/portal-backend',
    role: 'backend-plugin',
    pluginId: 'portal',
    configKey: 'portal',
  },
  {
    workspace: '@devportal/plugin-mcp-broker-common',
    dir: 'plugins/mcp-broker-common',
    role: 'common-library',
    pluginId: 'mcp-broker',
  },
  {
    workspace: '@devportal/plugin-mcp-broker-node',
    dir: 'plugins/mcp-broker-node',
    role: 'node-library',
    pluginId: 'mcp-broker',
  },
  {
    workspace: '@devportal/plugin-mcp-broker-backend',
    dir: 'plugins/mcp-broker-backend',
    role: 'backend-plugin',
    pluginId: 'mcp-broker',
    configKey: 'mcpBroker',
  },
  {
    workspace: '@devportal/plugin-mcp-broker-backend-module-portal',
    dir: 'plugins/mcp-broker-backend-module-portal',
    role: 'backend-plugin-module',
    pluginId: 'mcp-broker',
  },
  {
    workspace: '@devportal/plugin-catalog-backend-module-portal',
    dir: 'plugins/catalog-backend-module-portal',
    role: 'backend-plugin-module',
    pluginId: 'catalog',
    configKey: 'catalog',
  },
  {
    workspace: '@devportal/plugin-catalog-backend-module-mcp-broker',
    dir: 'plugins/catalog-backend-module-mcp-broker',
    role: 'backend-plugin-module',
    pluginId: 'catalog',
    configKey: 'catalog',
  },
  {
    workspace: '@devportal/plugin-permission-backend-module-await-plugins',
    dir: 'plugins/permission-backend-module-await-plugins',
    role: 'backend-plugin-module',
    pluginId: 'permission',
  },
];

/**
 * The published frontend plugin, and the published packages it depends on (in dependency
 * order): what scripts/frontend-install-test.mjs packs and installs into a fresh app.
 */
export const publishedFrontendPackages = [
  publishedPackages.find(pkg => pkg.workspace === '@devportal/plugin-portal-common'),
  publishedPackages.find(pkg => pkg.workspace === '@devportal/plugin-mcp-broker-common'),
  {
    workspace: '@devportal/plugin-portal',
    dir: 'plugins/portal',
    role: 'frontend-plugin',
    pluginId: 'portal',
  },
];

/**
 * Checks one packed tarball: the manifest as published (publishConfig applied, no workspace:
 * ranges, no private @internal/* runtime dependency, Backstage metadata, config schema) and the
 * files that must travel with it (built entry points, migrations, config schema; no sources,
 * tests, API report or dynamic-plugin export).
 * Returns the list of problems (empty when the tarball is fine).
 */
export function checkTarball({ workspace, dir, role, pluginId, configKey }, tarball) {
  const problems = [];
  const manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
  );
  const entries = new Set(
    execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(entry => entry.replace(/^package\//, '')),
  );
  const sourceDir = path.join(repoRoot, dir);

  const runtime = {
    ...manifest.dependencies,
    ...manifest.peerDependencies,
    ...manifest.optionalDependencies,
  };
  for (const [name, range] of Object.entries(runtime)) {
    if (String(range).startsWith('workspace:') || name.startsWith('@internal/')) {
      problems.push(`depends on ${name}@${range}: not installable outside the monorepo`);
    }
  }
  for (const [name, range] of Object.entries(manifest.devDependencies ?? {})) {
    if (String(range).startsWith('workspace:'))
      problems.push(`devDependency ${name}@${range} kept its workspace: range`);
  }
  if (manifest.private) problems.push('is private');
  for (const field of ['description', 'license', 'version']) {
    if (!manifest[field]) problems.push(`package.json lacks "${field}"`);
  }
  if (manifest.backstage?.role !== role)
    problems.push(`backstage.role is ${manifest.backstage?.role}, expected ${role}`);
  if (manifest.backstage?.pluginId !== pluginId)
    problems.push(`backstage.pluginId is ${manifest.backstage?.pluginId}, expected ${pluginId}`);
  if (pluginId !== undefined && !manifest.backstage?.pluginPackages?.includes(workspace)) {
    problems.push('backstage.pluginPackages does not list the package itself');
  }
  if (!Array.isArray(manifest.files)) problems.push('package.json lacks "files"');
  for (const field of ['main', 'types']) {
    const target = manifest[field]?.replace(/^\.\//, '');
    if (!target?.startsWith('dist/'))
      problems.push(`"${field}" is ${manifest[field]}: publishConfig not applied`);
    else if (!entries.has(target))
      problems.push(`"${field}" points at ${target}, which the tarball lacks`);
  }

  // `backstage-cli package prepack` compiles config.d.ts into config.schema.json and points
  // configSchema at it; either form must be in the tarball and describe the plugin's config key.
  if (configKey) {
    const schemaFile = manifest.configSchema;
    if (!schemaFile) problems.push('package.json lacks "configSchema"');
    else if (!entries.has(schemaFile))
      problems.push(`configSchema points at ${schemaFile}, which the tarball lacks`);
    else {
      const schema = execFileSync('tar', ['-xzOf', tarball, `package/${schemaFile}`], {
        encoding: 'utf8',
      });
      const describesKey = schemaFile.endsWith('.json')
        ? Boolean(JSON.parse(schema).properties?.[configKey])
        : schema.includes(`${configKey}?:`);
      if (!describesKey)
        problems.push(`${schemaFile} does not describe the "${configKey}" config key`);
    }
  }
  const migrationsDir = path.join(sourceDir, 'migrations');
  if (fs.existsSync(migrationsDir)) {
    for (const file of fs.readdirSync(migrationsDir)) {
      if (!entries.has(`migrations/${file}`)) problems.push(`the tarball lacks migrations/${file}`);
    }
  }
  for (const entry of entries) {
    if (/\.test\.|^src\/|^dist-dynamic\/|report\.api\.md$/.test(entry))
      problems.push(`the tarball ships ${entry}`);
  }
  return problems;
}
