/*
 * The development fixture's RBAC policies (examples/rbac-policy.csv and
 * rbac-conditional-policies.yaml) for an end-to-end backend: copied into a temporary directory
 * (tests may edit them there), with the `permission` config that loads them (carol is the RBAC
 * admin) and a cleanup that removes the copies.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const examplesDir = path.resolve(__dirname, '..', '..', '..', '..', '..', 'examples');

/** A copy of the development policies and the config that loads them. */
export interface DevelopmentRbac {
  /** The directory holding the copies. */
  dir: string;
  /** The `permission` config section for startBackendProcess. */
  permission: Record<string, unknown>;
  /** Removes the copies. */
  remove(): void;
}

/** Copies the development policies into a new temporary directory named after `prefix`. */
export function developmentRbac(prefix: string): DevelopmentRbac {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const file of ['rbac-policy.csv', 'rbac-conditional-policies.yaml']) {
    fs.copyFileSync(path.join(examplesDir, file), path.join(dir, file));
  }
  return {
    dir,
    permission: {
      enabled: true,
      rbac: {
        'policies-csv-file': path.join(dir, 'rbac-policy.csv'),
        conditionalPoliciesFile: path.join(dir, 'rbac-conditional-policies.yaml'),
        pluginsWithPermission: ['catalog', 'permission', 'portal', 'mcp-broker'],
        admin: { users: [{ name: 'user:default/carol' }] },
      },
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
