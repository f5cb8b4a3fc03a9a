/*
 * Keeps bench/portal-profile.mjs from rotting: runs its --smoke mode (200 records on
 * SQLite, 20 requests of GET /api/portal/requests/my as alice on the real backend process,
 * with both profiles) and checks that it prints its tables. Its preload wraps methods of
 * installed Backstage packages by file path; after an upgrade that moves them the backend
 * fails to start and this test says so. Timings are not asserted, the call counts are:
 * they do not depend on the machine.
 */
import { runBenchSmoke, tableAfter } from '../testing/benchSmoke';

describe('bench/portal-profile.mjs --smoke (real backend, 200 records on SQLite)', () => {
  it('prints the pieces of a request with one authorize and one store query each, and both profiles by package', async () => {
    const { code, stdout, stderr } = await runBenchSmoke('bench/portal-profile.mjs');
    if (code !== 0) {
      throw new Error(
        `bench/portal-profile.mjs --smoke exited with ${code}:\n${stderr}\n${stdout}`,
      );
    }

    const pieces = tableAfter(stdout, '### Pieces');
    const callsPerRequest = (piece: string) => pieces.find(row => row[0] === piece)?.[1];
    expect(callsPerRequest('permissions.authorize (token + HTTP round trip)')).toBe('1.00');
    expect(callsPerRequest('auth.getPluginRequestToken (in portal)')).toBe('1.00');
    expect(callsPerRequest('auth.authenticate (in portal)')).toBe('1.00');
    expect(callsPerRequest('portal store.listKeys')).toBe('1.00');
    expect(callsPerRequest('RBAC policy.handle (one per permission, run concurrently)')).toBe(
      '2.00',
    );

    // Which packages a 20-request profile samples depends on the machine's load (a busy
    // machine sampled no portal-backend frame at all once), so only the table's shape is checked.
    const cpu = tableAfter(stdout, '### CPU profile by package');
    expect(cpu.length).toBeGreaterThan(3);
    for (const [name, selfMs, share] of cpu) {
      expect(name).not.toBe('');
      expect(Number(selfMs)).toBeGreaterThanOrEqual(0);
      expect(share).toMatch(/^\d+\.\d %$/);
    }
    const allocations = tableAfter(stdout, '### Allocations by package');
    expect(allocations.length).toBeGreaterThan(3);
  }, 90_000);
});
