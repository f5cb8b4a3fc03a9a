/**
 * Real `@kubernetes/client-node` clients pointed at a fake server, for this
 * package's tests (never mocks: every call is HTTP to the fake).
 */
import https from 'node:https';
// eslint-disable-next-line @backstage/no-undeclared-imports -- only this package's tests use it
import * as k8s from '@kubernetes/client-node';
import type { FakeKubeApiServer } from './startFakeKubeApiServer';

/** Clients built from the fake's kubeconfig, as application code would build them. */
export function clientsFor(fake: FakeKubeApiServer) {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(fake.kubeConfigYaml);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    watch: new k8s.Watch(kc),
  };
}

/** Per-call options that make CustomObjectsApi send a JSON merge patch. */
export const mergePatch = () => k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** The Status body of a failed client-node call, with its HTTP code. */
export async function statusOf(call: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await call;
  } catch (e: any) {
    if (typeof e?.code !== 'number') throw e;
    return { code: e.code, body: parseBody(e.body) };
  }
  throw new Error('expected the call to fail');
}

function parseBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body; // e.g. the plain "404 page not found" of an unknown group
  }
}

/** The Kuadrant developer-portal resource coordinates used across tests. */
export const apiKeys = {
  group: 'devportal.kuadrant.io',
  version: 'v1alpha1',
  plural: 'apikeys',
} as const;

/** Same for APIProducts. */
export const apiProducts = {
  group: 'devportal.kuadrant.io',
  version: 'v1alpha1',
  plural: 'apiproducts',
} as const;

/** A raw HTTPS GET with the fake's token and CA, to see exactly what is on the wire. */
export async function fetchAs(
  fake: FakeKubeApiServer,
  path: string,
): Promise<{ status: number; text(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${fake.url}${path}`,
      { ca: fake.caCertificate, headers: { Authorization: `Bearer ${fake.token}` } },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', chunk => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: async () => Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}
