import net from 'node:net';
import os from 'node:os';
import { portalPermissions } from '@devportal/plugin-portal-common';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';

/** This machine's non-loopback IPv4 addresses (a backend bound to all interfaces answers there). */
const networkAddresses = Object.values(os.networkInterfaces())
  .flat()
  .filter(address => address !== undefined && !address.internal && address.family === 'IPv4')
  .map(address => address!.address);

/** Resolves with 'connected' or the connect error's code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise(resolve => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', error => resolve((error as NodeJS.ErrnoException).code ?? String(error)));
  });
}

describe('the development backend (real process)', () => {
  let backend: BackendProcess;

  beforeAll(async () => {
    backend = await startBackendProcess({ config: { mcpBroker: { servers: [] } } });
  }, 90_000);

  afterAll(async () => {
    await backend?.stop();
  });

  it('signs alice in through the oauth2-proxy provider', async () => {
    const token = await backend.signIn('alice');
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    expect(payload.sub).toBe('user:default/alice');
  });

  it('lists all 21 portal permissions in the permissions metadata', async () => {
    const token = await backend.signIn('alice');
    const response = await fetch(
      `${backend.baseUrl}/api/portal/.well-known/backstage/permissions/metadata`,
      { headers: { Authorization: `Bearer ${token}` } },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { permissions: Array<{ name: string }> };
    const names = body.permissions.map(p => p.name).sort();
    expect(names).toEqual(portalPermissions.map(p => p.name).sort());
    expect(names).toHaveLength(21);
  });

  it('answers 401 on a portal route without a token', async () => {
    const response = await fetch(`${backend.baseUrl}/api/portal/apiproducts`);
    expect(response.status).toBe(401);
  });

  // Issue #20: app-config.yaml has development sign-in and a static token; it binds loopback only.
  (networkAddresses.length > 0 ? describe : describe.skip)('with a network address', () => {
    it('listens on the loopback interface only (app-config.yaml backend.listen.host)', async () => {
      expect(await tryConnect('127.0.0.1', backend.port)).toBe('connected');
      for (const address of networkAddresses) {
        const outcome = await tryConnect(address, backend.port);
        expect(`${address}: ${outcome}`).toBe(`${address}: ECONNREFUSED`);
      }
    });
  });

  it('does not let an unknown user sign in', async () => {
    await expect(backend.signIn('mallory')).rejects.toThrow(/could not sign in/);
  });
});
