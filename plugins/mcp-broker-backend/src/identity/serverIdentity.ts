/*
 * The identity of a backend MCP server that a stored personal credential is bound to (spec
 * §11.1): not only its name, so that a new server under a removed server's name starts empty
 * instead of inheriting everybody's credential.
 *
 * - A config-file server: its name and the origin (scheme, host, port) of its URL. Another path
 *   on the same host keeps the credentials; another host never receives them.
 * - A Kubernetes registration: its namespace and name, its `metadata.uid` (a registration deleted
 *   and created again under the same name is another object, with another uid), and the origin
 *   of its URL.
 * Stored as a digest (32 hex digits of a labelled SHA-256): comparable, and nothing to read.
 */
import { createHash } from 'node:crypto';

/** Where a backend server entry came from (config.ts re-exports it; shown on `/status`). */
export type ServerSource =
  | { readonly type: 'config' }
  | {
      readonly type: 'kubernetes';
      readonly namespace: string;
      readonly name: string;
      /** The registration's `metadata.uid` (a re-created registration is another server). */
      readonly uid?: string;
      /** The admin's credential profile the registration names (spec §11.1), if any. */
      readonly credentialProfile?: string;
    };

/** What the identity is made of: the parts of a server entry it reads. */
export interface IdentifiableServer {
  readonly name: string;
  readonly url: string;
  /** Absent means `{ type: 'config' }`. */
  readonly source?: ServerSource;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** The server's identity digest; see the file comment. */
export function serverIdentityOf(server: IdentifiableServer): string {
  const source = server.source ?? { type: 'config' as const };
  const parts =
    source.type === 'kubernetes'
      ? ['kubernetes', source.namespace, source.name, source.uid ?? '', originOf(server.url)]
      : ['config', server.name, originOf(server.url)];
  const hash = createHash('sha256').update('mcp-broker server identity\n');
  // Length-prefixed, so no two different part lists hash the same text.
  for (const part of parts) hash.update(`${part.length}:${part}\n`);
  return hash.digest('hex').slice(0, 32);
}
