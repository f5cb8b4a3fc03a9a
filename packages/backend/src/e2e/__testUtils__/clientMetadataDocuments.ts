/*
 * Client ID metadata documents (CIMD) served by a test over HTTPS on loopback, as an MCP client
 * publishes its own (VS Code's is https://vscode.dev/oauth/client-metadata.json): the SDKs accept
 * only an https `clientMetadataUrl`, and Backstage's auth backend fetches the document when the
 * client first asks for authorization. The certificate is self-signed for 127.0.0.1 and
 * localhost; the backend process trusts it through NODE_EXTRA_CA_CERTS (`certificateFile`).
 */
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { selfSignedCertificate } from '@internal/fake-kube-apiserver';

/** A running document server. */
export interface ClientMetadataDocuments {
  /**
   * Publishes `metadata` at `/<name>.json` with `client_id` set to that URL, and returns the URL
   * (the client's id).
   */
  publish(name: string, metadata: Record<string, unknown>): string;
  /** How often a document was fetched (by the authorization server). */
  fetches(name: string): number;
  /** PEM file of the server's certificate, for the backend's NODE_EXTRA_CA_CERTS. */
  certificateFile: string;
  close(): Promise<void>;
}

/** Starts an HTTPS server on 127.0.0.1 (a free port) that serves published documents. */
export async function serveClientMetadataDocuments(): Promise<ClientMetadataDocuments> {
  const { cert, key } = selfSignedCertificate();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cimd-'));
  const certificateFile = path.join(dir, 'cimd-ca.pem');
  fs.writeFileSync(certificateFile, cert);
  const documents = new Map<string, string>();
  const fetchCounts = new Map<string, number>();
  const server = https.createServer({ cert, key }, (req, res) => {
    const name = /^\/([a-z0-9-]+)\.json$/.exec(req.url ?? '')?.[1];
    const body = name === undefined ? undefined : documents.get(name);
    if (name === undefined || body === undefined) {
      res.writeHead(404).end();
      return;
    }
    fetchCounts.set(name, (fetchCounts.get(name) ?? 0) + 1);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    certificateFile,
    publish(name, metadata) {
      const clientId = `${origin}/${name}.json`;
      documents.set(name, JSON.stringify({ ...metadata, client_id: clientId }));
      return clientId;
    },
    fetches: name => fetchCounts.get(name) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
