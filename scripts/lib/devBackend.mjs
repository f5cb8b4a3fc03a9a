// How scripts reach the development backend (`yarn start`) as a newcomer would: sign in as a
// fixture user through the development oauth2-proxy provider, and wait until the backend is
// ready for the README's walkthroughs. Shared by scripts/start-dev.mjs (its "ready" line) and
// scripts/check-dev-backend.mjs (.ci/run's probe of the run command).

/** The development backend's address when nothing overrides it (it listens on 127.0.0.1). */
export const DEV_BACKEND_URL = 'http://127.0.0.1:7007';

/**
 * Signs `user` in through the development oauth2-proxy provider and returns the Backstage token.
 * Rejects while the backend is starting (the provider answers 500 until the catalog has read the
 * fixture users).
 */
export async function signIn(baseUrl, user) {
  return (await signInIdentity(baseUrl, user)).token;
}

/** Signs `user` in and returns the Backstage token with the identity it carries. */
async function signInIdentity(baseUrl, user) {
  const response = await fetch(`${baseUrl}/api/auth/oauth2Proxy/refresh`, {
    headers: { 'X-Forwarded-User': user },
  });
  if (!response.ok) throw new Error(`sign-in as ${user}: HTTP ${response.status}`);
  const identity = (await response.json())?.backstageIdentity;
  if (typeof identity?.token !== 'string') {
    throw new Error(`sign-in as ${user}: no token in the answer`);
  }
  return identity;
}

/** The fixture's team (examples/org.yaml): bob and dave are its members. */
const FIXTURE_TEAM = 'group:default/payments-team';

/**
 * One resource permission per plugin with a conditional policy for bob's roles
 * (examples/rbac-conditional-policies.yaml): RBAC answers CONDITIONAL for each while it holds
 * that plugin's policy.
 */
const FIXTURE_CONDITIONAL_PERMISSIONS = [
  {
    name: 'portal.apikey.approve',
    resourceType: 'portal-apikey',
    attributes: { action: 'update' },
  },
  { name: 'mcp-broker.tool.use', resourceType: 'mcp-broker-tool', attributes: {} },
  { name: 'catalog.entity.read', resourceType: 'catalog-entity', attributes: { action: 'read' } },
];

/** The development config's static token (a service principal; app-config.yaml). */
const DEV_STATIC_TOKEN = 'dev-only-static-token-0123456789';

/**
 * Resolves once the fixture users can sign in with their team memberships, RBAC applies the
 * fixture's conditional policies and the broker has connected every configured MCP server: what
 * the README's walkthroughs need. It waits for the catalog to hold the users before it tries a
 * sign-in (a sign-in before that fails, and the auth backend logs each failure as an error), and
 * reads the broker's status with the development static token. Rejects when that does not happen
 * before `deadline` (a Date.now() value).
 */
export async function untilReady(baseUrl, deadline) {
  const asService = { headers: { Authorization: `Bearer ${DEV_STATIC_TOKEN}` } };
  await untilDeadline(deadline, 'the catalog reading the fixture users', async () => {
    const response = await fetch(
      `${baseUrl}/api/catalog/entities/by-name/user/default/alice`,
      asService,
    );
    if (!response.ok) throw new Error(`the catalog answers ${response.status} for alice`);
  });
  await untilDeadline(deadline, 'alice signing in', () => signIn(baseUrl, 'alice'));
  // The catalog stitches each entity on its own: bob can sign in before his team membership
  // (which goes into his token) and the team's member list (which RBAC reads for the team's
  // roles) are there. Until then bob's approvals would be refused.
  // (packages/backend/src/testing/startBackendProcess.ts waits for the same in the tests.)
  const bobToken = await untilDeadline(deadline, 'the fixture team memberships', async () => {
    const bob = await signInIdentity(baseUrl, 'bob');
    if (!bob.identity?.ownershipEntityRefs?.includes(FIXTURE_TEAM)) {
      throw new Error(`bob's sign-in does not carry ${FIXTURE_TEAM} yet`);
    }
    const team = await fetch(
      `${baseUrl}/api/catalog/entities/by-name/group/default/payments-team`,
      asService,
    );
    if (!team.ok) throw new Error(`the catalog answers ${team.status} for payments-team`);
    const members = ((await team.json()).relations ?? [])
      .filter(relation => relation.type === 'hasMember')
      .map(relation => relation.targetRef);
    if (!['user:default/bob', 'user:default/dave'].every(member => members.includes(member))) {
      throw new Error(`payments-team lists ${members.join(', ') || 'no members'} so far`);
    }
    return bob.token;
  });
  // RBAC reads each plugin's permission metadata while it starts and skips, until the next
  // restart, the conditional policies of a plugin that was not up in time (docs/deployment.md,
  // "Starting"; the development backend starts RBAC once those plugins are up); bob's approvals
  // and the MCP users' tools come from those policies.
  await untilDeadline(deadline, "RBAC applying the fixture's conditional policies", async () => {
    const response = await fetch(`${baseUrl}/api/permission/authorize`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${bobToken}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        items: FIXTURE_CONDITIONAL_PERMISSIONS.map(permission => ({
          id: permission.name,
          permission: { type: 'resource', ...permission },
        })),
      }),
    });
    if (!response.ok) throw new Error(`POST /api/permission/authorize: HTTP ${response.status}`);
    const skipped = (await response.json()).items
      .filter(item => item.result !== 'CONDITIONAL')
      .map(item => item.id);
    if (skipped.length > 0) {
      throw Object.assign(
        new Error(
          `RBAC skipped the conditional policies for ${skipped.join(', ')}; restart the backend ` +
            '(docs/deployment.md, "Starting")',
        ),
        { final: true },
      );
    }
  });
  await untilDeadline(deadline, 'the broker connecting its MCP servers', async () => {
    const response = await fetch(`${baseUrl}/api/mcp-broker/status`, asService);
    if (!response.ok) throw new Error(`GET /api/mcp-broker/status: HTTP ${response.status}`);
    const { backends } = await response.json();
    const waiting = backends.filter(backend => backend.state !== 'connected');
    if (waiting.length > 0) {
      throw new Error(waiting.map(backend => `${backend.name} is ${backend.state}`).join(', '));
    }
  });
}

const POLL_MS = 500;

/**
 * Retries `attempt` until it succeeds or `deadline` passes; returns its value. An error with
 * `final: true` (waiting cannot help) is thrown at once.
 */
export async function untilDeadline(deadline, what, attempt) {
  let lastError;
  while (Date.now() < deadline) {
    try {
      return await attempt();
    } catch (error) {
      if (error?.final) throw error;
      lastError = error;
      await new Promise(resolve => setTimeout(resolve, POLL_MS));
    }
  }
  throw new Error(`${what} did not succeed in time: ${lastError?.message ?? lastError}`);
}
