/*
 * The writer a grant source gets (docs/contracts/mcp-access.md §5.1): it checks each grant the
 * source writes and stores it under the source's prefix (`<source id>:<grant id>`, the same for
 * groups), so two sources never touch each other's grants. A grant that is not well formed fails
 * the whole write with an InputError naming the grant and the field; nothing is written.
 */
import { InputError } from '@backstage/errors';
import type { McpAccessGrant, McpAccessGrantWriter } from '@devportal/plugin-mcp-broker-node';
import type { AccessGrantStore, GrantWriteResult } from './AccessGrantStore';

/** A source id, and a server or endpoint name: what the broker accepts. */
const NAME = /^[a-z0-9-]+$/;
/** A user entity ref, `user:<namespace>/<name>`. */
const USER_REF = /^user:[^/:\s]+\/[^/:\s]+$/i;
const MAX_ID = 200;

/** Throws an InputError when `source` cannot be a grant source's id. */
export function checkGrantSourceId(source: string): void {
  if (!NAME.test(source) || source.length > 40) {
    throw new InputError(
      `Invalid MCP access grant source id "${source.slice(0, 40)}": use at most 40 of a-z, 0-9 and -`,
    );
  }
}

/** The problem with `grant`, or undefined when it is well formed. */
function problemOf(grant: McpAccessGrant): string | undefined {
  if (typeof grant.id !== 'string' || grant.id === '' || grant.id.length > MAX_ID)
    return `id must be a string of 1 to ${MAX_ID} characters`;
  if (typeof grant.group !== 'string' || grant.group === '' || grant.group.length > MAX_ID)
    return `group must be a string of 1 to ${MAX_ID} characters`;
  if (typeof grant.subject !== 'string' || !USER_REF.test(grant.subject))
    return 'subject must be a user entity ref (user:<namespace>/<name>)';
  if (grant.target?.kind !== 'server' && grant.target?.kind !== 'endpoint')
    return 'target.kind must be "server" or "endpoint"';
  if (typeof grant.target.name !== 'string' || !NAME.test(grant.target.name))
    return 'target.name must be a broker server or endpoint name (a-z, 0-9, -)';
  if (typeof grant.title !== 'string' || typeof grant.plan !== 'string')
    return 'title and plan must be strings';
  if (!Array.isArray(grant.limits)) return 'limits must be an array';
  for (const limit of grant.limits) {
    if (!Number.isSafeInteger(limit?.calls) || limit.calls < 0)
      return 'each limit needs calls, a whole number of 0 or more';
    if (!Number.isSafeInteger(limit.windowMs) || limit.windowMs <= 0)
      return 'each limit needs windowMs, a whole number of milliseconds above 0';
    if (
      limit.tools !== undefined &&
      !limit.tools.every((tool: unknown) => typeof tool === 'string')
    )
      return "a limit's tools must be tool name patterns (strings)";
  }
  if (!Number.isSafeInteger(grant.approvedAt)) return 'approvedAt must be epoch milliseconds';
  if (grant.expiresAt !== undefined && !Number.isSafeInteger(grant.expiresAt))
    return 'expiresAt must be epoch milliseconds when given';
  return undefined;
}

/** `grants` checked and prefixed with `source` (an InputError names the first bad one). */
export function prefixed(source: string, grants: readonly McpAccessGrant[]): McpAccessGrant[] {
  return grants.map(grant => {
    const problem = problemOf(grant);
    if (problem !== undefined) {
      throw new InputError(
        `Invalid MCP access grant "${String(grant?.id).slice(0, 60)}" from source ${source}: ${problem}`,
      );
    }
    return { ...grant, id: `${source}:${grant.id}`, group: `${source}:${grant.group}` };
  });
}

/**
 * The writer of grant source `source` over `store`; see the file comment. `onWritten` runs
 * after each write that changed something, before the writer's call resolves (this replica's
 * index reads the change at once).
 */
export function grantSourceWriter(
  source: string,
  store: AccessGrantStore,
  onWritten: () => Promise<void> = async () => undefined,
): McpAccessGrantWriter {
  checkGrantSourceId(source);
  const written = async (result: GrantWriteResult) => {
    if (result !== undefined) await onWritten();
  };
  return {
    async upsert(grants) {
      await written(await store.upsert(prefixed(source, grants)));
    },
    async remove(ids) {
      await written(await store.remove(ids.map(id => `${source}:${id}`)));
    },
    async replaceGroup(group, grants) {
      const all = prefixed(source, grants);
      const mismatch = all.find(grant => grant.group !== `${source}:${group}`);
      if (mismatch !== undefined) {
        throw new InputError(
          `Invalid MCP access grant "${mismatch.id}" from source ${source}: replaceGroup("${group}") was given a grant of another group`,
        );
      }
      await written(await store.replaceGroup(`${source}:${group}`, all));
    },
    async removeGroup(group) {
      await written(await store.removeGroup(`${source}:${group}`));
    },
  };
}
