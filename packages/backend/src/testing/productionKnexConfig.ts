/*
 * The connection-pool settings of app-config.production.yaml (`backend.database.knexConfig`), so
 * that the fault tests prove the budget that production runs with, not a copy of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import { parse } from 'yaml';

/** `backend.database.knexConfig` of the production config. */
export function productionKnexConfig(): Record<string, unknown> {
  const file = path.join(resolvePackagePath('backend'), '..', '..', 'app-config.production.yaml');
  const config = parse(fs.readFileSync(file, 'utf8'));
  const knexConfig = config?.backend?.database?.knexConfig;
  if (typeof knexConfig !== 'object' || knexConfig === null) {
    throw new Error(`${file} has no backend.database.knexConfig`);
  }
  return knexConfig;
}
