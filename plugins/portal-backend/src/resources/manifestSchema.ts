/*
 * What a manifest document must look like to be served as a read-only object. Checked
 * once at start-up, so the service can trust the shapes it derives plans from.
 */
import { z } from 'zod';
import type { ReadOnlyKind } from '../store/types';

/** The apiVersion each read-only kind must have (spec §1). */
export const READ_ONLY_API_VERSIONS: Readonly<Record<ReadOnlyKind, string>> = {
  HTTPRoute: 'gateway.networking.k8s.io/v1',
  PlanPolicy: 'extensions.kuadrant.io/v1alpha1',
  AuthPolicy: 'kuadrant.io/v1',
  RateLimitPolicy: 'kuadrant.io/v1',
};

/** Whether `kind` is one of the read-only kinds. */
export function isReadOnlyKind(kind: unknown): kind is ReadOnlyKind {
  return (
    typeof kind === 'string' && Object.prototype.hasOwnProperty.call(READ_ONLY_API_VERSIONS, kind)
  );
}

// RFC 1123 subdomain (object names) and label (namespaces), as Kubernetes checks them.
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

// Kubernetes' label syntax (validation.IsQualifiedName / IsValidLabelValue): a label a
// Secret cannot carry would make the approval's Secret creation fail.
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash === -1) {
    return LABEL_NAME.test(key);
  }
  const prefix = key.slice(0, slash);
  return (
    prefix.length <= 253 && DNS1123_SUBDOMAIN.test(prefix) && LABEL_NAME.test(key.slice(slash + 1))
  );
}

const metadataSchema = z
  .object({
    name: z.string().max(253).regex(DNS1123_SUBDOMAIN, 'must be a lowercase DNS-1123 subdomain'),
    namespace: z
      .string({ required_error: 'is required (the object must name its namespace)' })
      .max(63)
      .regex(DNS1123_LABEL, 'must be a lowercase DNS-1123 label'),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    creationTimestamp: z.string().optional(),
    labels: z.record(z.string()).optional(),
    annotations: z.record(z.string()).optional(),
  })
  .passthrough();

const targetRefSchema = z
  .object({
    group: z.string().optional(),
    kind: z.string(),
    name: z.string().min(1),
  })
  .passthrough();

const policySpecSchema = z.object({ targetRef: targetRefSchema }).passthrough();

/** The spec of a PlanPolicy: its target and the plans it offers. */
export const planPolicySpecSchema = z
  .object({
    targetRef: targetRefSchema,
    plans: z
      .array(
        z
          .object({
            tier: z.string().min(1),
            description: z.string().optional(),
            limits: z.record(z.unknown()).optional(),
          })
          .passthrough(),
      )
      .min(1),
  })
  .passthrough();

/**
 * The part of a Kuadrant v1 AuthPolicy spec the portal reads: its target and the label
 * selector of each apiKey authentication rule under `spec.rules.authentication`. Every
 * other field (credentials, `when`, `patterns`, other rule kinds, other authentication
 * methods) passes through unchecked: the portal neither reads nor enforces them.
 */
export const authPolicySpecSchema = z
  .object({
    targetRef: targetRefSchema,
    rules: z
      .object({
        authentication: z
          .record(
            z
              .object({
                apiKey: z
                  .object({
                    selector: z
                      .object({
                        matchLabels: z
                          .record(
                            z.string().refine(isLabelKey, 'must be a Kubernetes label key'),
                            z.string().regex(LABEL_VALUE, 'must be a Kubernetes label value'),
                          )
                          .optional(),
                      })
                      .passthrough(),
                  })
                  .passthrough()
                  .optional(),
              })
              .passthrough(),
          )
          .optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

const SPEC_SCHEMAS: Record<ReadOnlyKind, z.ZodTypeAny> = {
  HTTPRoute: z.object({}).passthrough(),
  PlanPolicy: planPolicySpecSchema,
  AuthPolicy: policySpecSchema,
  RateLimitPolicy: policySpecSchema,
};

/** The schema of a whole document of the given kind. */
export function manifestSchema(kind: ReadOnlyKind) {
  return z
    .object({
      apiVersion: z.literal(READ_ONLY_API_VERSIONS[kind], {
        errorMap: () => ({
          message: `must be ${READ_ONLY_API_VERSIONS[kind]} for kind ${kind}`,
        }),
      }),
      kind: z.literal(kind),
      metadata: metadataSchema,
      spec: SPEC_SCHEMAS[kind],
      status: z.unknown().optional(),
    })
    .passthrough();
}

/** A zod error as one readable line: `path: message; path: message`. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map(issue => `${issue.path.join('.') || '(document)'}: ${issue.message}`)
    .join('; ');
}
