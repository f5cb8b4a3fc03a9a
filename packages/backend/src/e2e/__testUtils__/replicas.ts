/*
 * Several real backend processes on one PostgreSQL database (the same `backend.database`
 * connection and prefix), as the multi-replica tests run them (replicas.test.ts,
 * replicasEras.test.ts). Only with PostgreSQL (BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING
 * set, as yarn test does): an in-memory SQLite database cannot be shared by two processes.
 * Without it, each test file declares one test saying why it was skipped.
 */
/* eslint-disable jest/no-export -- helpers of the replica suites, one of which declares their skip test */
import { BackendDatabase, backendDatabases } from '../../testing/backendDatabases';
import {
  BackendProcess,
  BackendProcessOptions,
  startBackendProcess,
} from '../../testing/startBackendProcess';

/** The PostgreSQL database the replicas share, or undefined when none is configured. */
export function replicaDatabase(purpose: string): BackendDatabase | undefined {
  return backendDatabases(purpose).find(d => d.name === 'PostgreSQL');
}

/**
 * Starts `count` backend processes with `config` on `database`, one after the other: the first
 * creates the plugin databases and runs the migrations. If one fails to start, those already
 * running are stopped before the error is thrown.
 */
export async function startReplicas(
  database: BackendDatabase,
  config: Record<string, unknown>,
  count = 2,
  processOptions: Omit<BackendProcessOptions, 'config'> = {},
): Promise<BackendProcess[]> {
  const replicaConfig = {
    ...config,
    backend: { ...(config.backend as object | undefined), database: database.config },
  };
  const replicas: BackendProcess[] = [];
  try {
    while (replicas.length < count) {
      replicas.push(await startBackendProcess({ ...processOptions, config: replicaConfig }));
    }
  } catch (error) {
    await Promise.all(replicas.map(replica => replica.stop()));
    throw error;
  }
  return replicas;
}

/**
 * Declares the one test a replica suite runs when no PostgreSQL server is configured: it says
 * why the suite was skipped (and fails should the variable be set after all).
 */
export function describeSkippedWithoutPostgres(purpose: string): void {
  describe(`${purpose}: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING not set`, () => {
    it('is skipped only because no PostgreSQL server is configured', () => {
      expect(process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING).toBeFalsy();
    });
  });
}
