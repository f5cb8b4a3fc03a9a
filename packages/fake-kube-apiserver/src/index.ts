/**
 * A faithful fake of the Kubernetes API server at the HTTP level, for tests
 * of code built on `@kubernetes/client-node` (no cluster runs on CI).
 *
 * @packageDocumentation
 */
export { startFakeKubeApiServer } from './startFakeKubeApiServer';
export type {
  FakeKubeApiServer,
  FakeKubeApiServerOptions,
  FaultOptions,
} from './startFakeKubeApiServer';
export type {
  FaultHandle,
  HeldRequests,
  KubeRequestInfo,
  KubeVerb,
  RecordedRequest,
  RequestMatcher,
} from './faults';
export type { ActiveWatchInfo } from './WatchHub';
export { customResource, resourcesFromCrd } from './resources';
export type { CustomResourceDefinitionInput, KubeObject, ResourceType } from './resources';
export {
  configMapResource,
  namespaceResource,
  secretResource,
  wellKnownResources,
} from './wellKnownResources';
export { parseManifests } from './manifests';
export type { KubeStatus } from './KubeStatusError';
// Also used by other tests that need a TLS server on loopback (the broker's OAuth tests serve a
// client ID metadata document over HTTPS with it).
export { selfSignedCertificate } from './selfSignedCertificate';
export type { SelfSignedCertificate } from './selfSignedCertificate';
