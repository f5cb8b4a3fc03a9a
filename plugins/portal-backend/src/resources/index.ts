/** Read-only Kuadrant and Gateway API objects: sources and what the portal derives from them. */
export { ManifestResourceSource, type ManifestText } from './ManifestResourceSource';
export { READ_ONLY_API_VERSIONS, isReadOnlyKind } from './manifestSchema';
export { plansForRoute, plansOfPolicies } from './plansForRoute';
export {
  AUTHORINO_SECRET_LABEL,
  AUTHORINO_SECRET_LABEL_VALUE,
  keySecretLabelsForRoute,
  keySecretLabelsOfPolicies,
} from './keySecretLabelsForRoute';
