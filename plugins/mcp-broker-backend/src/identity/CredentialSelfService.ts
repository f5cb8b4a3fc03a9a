/*
 * What a person may do with their own personal credentials (spec §11, `userCredential`), behind
 * the REST endpoints and the broker's page: store one for a server that takes one, list theirs
 * (server names and dates, never values), delete one. Nobody reads one back — not the person,
 * not an administrator: there is no operation for it.
 *
 * A store that answers a URL-mode elicitation (its `elicitationId`) completes it: only the person
 * the elicitation was made for, for its server, may (the MCP specification's phishing rule: the
 * user who opens the URL must be the user who caused it), and the client session that caused it
 * is told (`notifications/elicitation/complete`, when its stream is on this replica).
 */
import { InputError, NotAllowedError, NotFoundError } from '@backstage/errors';
import type { CredentialDates, CredentialRequestStore } from './personalCredentialStores';
import type { PersonalCredentialService } from './PersonalCredentialService';
import type { ServerAuth, UserCredentialAuth } from './serverAuth';
import type { IdentifiableServer } from './serverIdentity';

/** One line of a person's credential list. */
export interface CredentialListItem {
  /** The server name. */
  readonly server: string;
  /** True when a credential is stored. */
  readonly stored: boolean;
  /** False for a stored credential whose server no longer takes one (it is never used). */
  readonly inUse: boolean;
  /** What to store, from the server's configuration. */
  readonly description?: string;
  /** ISO 8601 dates, when stored. */
  readonly createdAt?: string;
  readonly updatedAt?: string;
}

/** What the broker's page shows for one server. */
export interface CredentialPageModel {
  readonly server: string;
  readonly description?: string;
  readonly stored?: { createdAt: string; updatedAt: string };
  /** The elicitation the page was opened for: still open, or why it cannot be completed. */
  readonly elicitation?: 'open' | 'expired-or-unknown' | 'for-someone-else';
}

/** Options of {@link CredentialSelfService}. */
export interface CredentialSelfServiceOptions {
  credentials: PersonalCredentialService;
  requests: CredentialRequestStore;
  /** The live server set (config reload and Kubernetes change it). */
  servers: {
    get(name: string): (IdentifiableServer & { auth?: ServerAuth }) | undefined;
    list(): ReadonlyArray<IdentifiableServer & { auth?: ServerAuth }>;
  };
  /** Tells a 2025-11-25 client session that its elicitation is complete. */
  notifyComplete(clientSessionId: string, elicitationId: string): void;
  now?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The person-facing operations on personal credentials; see the file comment. */
export class CredentialSelfService {
  constructor(private readonly options: CredentialSelfServiceOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The server, if it takes a personal credential; NotFoundError otherwise. */
  private personalServer(name: string): UserCredentialAuth {
    const auth = this.options.servers.get(name)?.auth;
    if (auth?.mode !== 'userCredential') {
      throw new NotFoundError(`No MCP server "${name.slice(0, 100)}" takes a personal credential`);
    }
    return auth;
  }

  /** The servers that take a personal credential, and the person's stored ones. */
  async list(principal: string): Promise<CredentialListItem[]> {
    const stored = new Map(
      (await this.options.credentials.list(principal)).map(c => [c.server, c]),
    );
    const items: CredentialListItem[] = [];
    for (const server of this.options.servers.list()) {
      if (server.auth?.mode !== 'userCredential') continue;
      const listing = stored.get(server.name);
      stored.delete(server.name);
      // One stored for an earlier server of that name is not this server's (serverIdentity.ts).
      const dates = listing?.current ? listing : undefined;
      items.push({
        server: server.name,
        stored: dates !== undefined,
        inUse: true,
        ...(server.auth.description === undefined ? {} : { description: server.auth.description }),
        ...(dates === undefined
          ? {}
          : { createdAt: iso(dates.createdAt), updatedAt: iso(dates.updatedAt) }),
      });
    }
    for (const [server, dates] of stored) {
      items.push({
        server,
        stored: true,
        inUse: false,
        createdAt: iso(dates.createdAt),
        updatedAt: iso(dates.updatedAt),
      });
    }
    return items.sort((a, b) => a.server.localeCompare(b.server));
  }

  /**
   * Stores the person's credential for `server`, completing the elicitation `elicitationId`
   * when given (NotAllowedError when it was made for someone else or another server).
   */
  async store(
    principal: string,
    server: string,
    value: string,
    elicitationId?: string,
  ): Promise<CredentialDates> {
    this.personalServer(server);
    const request =
      elicitationId === undefined
        ? undefined
        : await this.openRequest(principal, server, elicitationId);
    const dates = await this.options.credentials.save(principal, server, value);
    if (request !== undefined && (await this.options.requests.complete(request.id))) {
      if (request.clientSessionId !== undefined) {
        this.options.notifyComplete(request.clientSessionId, request.id);
      }
    }
    return dates;
  }

  /** Deletes the person's credential for `server` (NotFoundError when there is none). */
  async remove(principal: string, server: string): Promise<void> {
    if (!(await this.options.credentials.delete(principal, server))) {
      throw new NotFoundError(`You have no credential stored for "${server.slice(0, 100)}"`);
    }
  }

  /** What the page shows the person for `server`. */
  async page(
    principal: string,
    server: string,
    elicitationId?: string,
  ): Promise<CredentialPageModel> {
    const auth = this.personalServer(server);
    const dates = (await this.options.credentials.list(principal)).find(
      c => c.server === server && c.current,
    );
    let elicitation: CredentialPageModel['elicitation'];
    if (elicitationId !== undefined) {
      const request = await this.options.requests.get(elicitationId, this.now);
      if (request === undefined || request.server !== server) elicitation = 'expired-or-unknown';
      else elicitation = request.principal === principal ? 'open' : 'for-someone-else';
    }
    return {
      server,
      ...(auth.description === undefined ? {} : { description: auth.description }),
      ...(dates === undefined
        ? {}
        : { stored: { createdAt: iso(dates.createdAt), updatedAt: iso(dates.updatedAt) } }),
      ...(elicitation === undefined ? {} : { elicitation }),
    };
  }

  private async openRequest(principal: string, server: string, elicitationId: string) {
    if (elicitationId === '' || elicitationId.length > 64) {
      throw new InputError('elicitationId must be the id from the link you were given');
    }
    const request = await this.options.requests.get(elicitationId, this.now);
    if (request === undefined || request.server !== server) {
      throw new NotFoundError(
        'This link has expired or was already used: store the credential without it, then call the tool again',
      );
    }
    if (request.principal !== principal) {
      throw new NotAllowedError(
        'This link was made for another person: open the link your own MCP client shows you',
      );
    }
    return request;
  }
}
