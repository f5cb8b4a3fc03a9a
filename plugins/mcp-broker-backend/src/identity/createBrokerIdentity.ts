/*
 * Builds the identity module (spec §11) from its parts: the personal credential service (checking
 * the encryption keys against what is stored: a wrong key fails here, at start-up), the subject
 * token issuer with its shared key, the exchanged-token cache, the four mode strategies, the
 * provider the call path asks, and the self-service behind the REST endpoints and the page.
 * Called once by plugin.ts; everything it returns lives as long as the plugin.
 */
import type { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import { BackendCredentialProvider } from './BackendCredentialProvider';
import type { CredentialCipher } from './CredentialCipher';
import {
  BackstageModeCredentials,
  brokerModeCredentials,
  TokenExchangeModeCredentials,
  UserCredentialModeCredentials,
} from './credentialModes';
import { CredentialSelfService, type CredentialSelfServiceOptions } from './CredentialSelfService';
import { ExchangedTokens } from './ExchangedTokens';
import { PersonalCredentialService } from './PersonalCredentialService';
import type { KeyRing } from './KeyRing';
import type { CredentialRequestStore, PersonalCredentialStore } from './personalCredentialStores';
import { serverIdentityOf } from './serverIdentity';
import { SubjectTokenIssuer } from './SubjectTokenIssuer';

/** What {@link createBrokerIdentity} needs. */
export interface BrokerIdentityOptions {
  auth: AuthService;
  logger: LoggerService;
  stores: {
    credentials: PersonalCredentialStore;
    requests: CredentialRequestStore;
  };
  /** The subject-token signing keys (BrokerKeys), loaded. */
  signingKeys: KeyRing;
  /** From `mcpBroker.credentialEncryptionKey` (undefined: personal credentials off). */
  cipher: CredentialCipher | undefined;
  /** The broker's external base URL, e.g. `https://backstage.example.com/api/mcp-broker`. */
  externalBaseUrl: string;
  /** The page for storing `server`'s credential (absolute URL, no query): credentialPageLocation.ts. */
  pageUrl(server: string): string;
  /** `mcpBroker.elicitationTtl`. */
  elicitationTtlMs: number;
  /** `mcpBroker.requestTimeout`: the limit of one token exchange. */
  requestTimeoutMs: number;
  servers: CredentialSelfServiceOptions['servers'];
  notifyComplete: CredentialSelfServiceOptions['notifyComplete'];
}

/** The identity module's services. */
export interface BrokerIdentity {
  provider: BackendCredentialProvider;
  selfService: CredentialSelfService;
  issuer: SubjectTokenIssuer;
  personalCredentials: PersonalCredentialService;
  /** The page for storing `server`'s credential (absolute URL, no query). */
  pageUrl(server: string): string;
  /** Stops the sweep of expired credential requests. */
  close(): Promise<void>;
}

/** How often expired credential requests are deleted. */
const REQUEST_SWEEP_INTERVAL_MS = 60_000;

/** Builds the identity module; rejects (start-up fails) when the credential keys are wrong. */
export async function createBrokerIdentity(
  options: BrokerIdentityOptions,
): Promise<BrokerIdentity> {
  const personalCredentials = await PersonalCredentialService.create({
    store: options.stores.credentials,
    cipher: options.cipher,
    serverIdentity: name => {
      const server = options.servers.get(name);
      return server === undefined ? undefined : serverIdentityOf(server);
    },
    logger: options.logger,
  });
  const issuer = await SubjectTokenIssuer.create({
    issuer: options.externalBaseUrl,
    keys: options.signingKeys,
  });
  const exchangedTokens = new ExchangedTokens({ issuer, timeoutMs: options.requestTimeoutMs });
  const pageUrl = options.pageUrl;
  const provider = new BackendCredentialProvider({
    modes: [
      brokerModeCredentials,
      new BackstageModeCredentials(options.auth),
      new TokenExchangeModeCredentials(exchangedTokens),
      new UserCredentialModeCredentials({
        credentials: personalCredentials,
        requests: options.stores.requests,
        pageUrl,
        elicitationTtlMs: options.elicitationTtlMs,
      }),
    ],
    exchangedTokens,
    pageUrl,
  });
  const selfService = new CredentialSelfService({
    credentials: personalCredentials,
    requests: options.stores.requests,
    servers: options.servers,
    notifyComplete: options.notifyComplete,
  });
  const sweep = setInterval(() => {
    options.stores.requests.deleteExpired(Date.now()).catch(error => {
      options.logger.warn(`MCP broker: could not sweep expired credential requests: ${error}`);
    });
  }, REQUEST_SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    provider,
    selfService,
    issuer,
    personalCredentials,
    pageUrl,
    async close() {
      clearInterval(sweep);
      await personalCredentials.whenRotated();
    },
  };
}
