import { portalPermissions } from '@devportal/plugin-portal-common';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';

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

  it('lists all 20 portal permissions in the permissions metadata', async () => {
    const token = await backend.signIn('alice');
    const response = await fetch(
      `${backend.baseUrl}/api/portal/.well-known/backstage/permissions/metadata`,
      { headers: { Authorization: `Bearer ${token}` } },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { permissions: Array<{ name: string }> };
    const names = body.permissions.map(p => p.name).sort();
    expect(names).toEqual(portalPermissions.map(p => p.name).sort());
    expect(names).toHaveLength(20);
  });

  it('answers 401 on a portal route without a token', async () => {
    const response = await fetch(`${backend.baseUrl}/api/portal/apiproducts`);
    expect(response.status).toBe(401);
  });

  it('does not let an unknown user sign in', async () => {
    await expect(backend.signIn('mallory')).rejects.toThrow(/could not sign in/);
  });
});
