/**
 * The object-meta validation every kube-apiserver write goes through
 * (`apimachinery/pkg/api/validation` and `util/validation`), with the real
 * wording, so a client that writes e.g. `user:default/alice` into a label value
 * fails here exactly as it would against a cluster.
 */
import { FieldError } from './statusErrors';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const QUALIFIED_NAME_PART = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED_NAME_PART})?`;

const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const qualifiedNamePartRe = new RegExp(`^${QUALIFIED_NAME_PART}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE}$`);

/** How a resource's `metadata.name` is validated. */
export type NameValidation = 'dns1123-subdomain' | 'dns1123-label';

/** Messages for a name that is not a DNS-1123 subdomain/label (empty when valid). */
export function validateName(name: string, kind: NameValidation): string[] {
  const problems: string[] = [];
  if (kind === 'dns1123-label') {
    if (name.length > 63) problems.push('must be no more than 63 characters');
    if (!dns1123LabelRe.test(name)) {
      problems.push(
        `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${DNS1123_LABEL}')`,
      );
    }
  } else {
    if (name.length > 253) problems.push('must be no more than 253 characters');
    if (!dns1123SubdomainRe.test(name)) {
      problems.push(
        `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`,
      );
    }
  }
  return problems;
}

/** Messages for a label/annotation key that is not a qualified name. */
export function validateQualifiedName(key: string): string[] {
  const parts = key.split('/');
  let name = key;
  const problems: string[] = [];
  if (parts.length === 2) {
    const [prefix, rest] = parts;
    name = rest;
    if (prefix.length === 0) {
      problems.push('prefix part must be non-empty');
    } else {
      problems.push(...validateName(prefix, 'dns1123-subdomain').map(m => `prefix part ${m}`));
    }
  } else if (parts.length > 2) {
    return [
      `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME_PART}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) {
    problems.push('name part must be non-empty');
  } else {
    if (name.length > 63) problems.push('name part must be no more than 63 characters');
    if (!qualifiedNamePartRe.test(name)) {
      problems.push(
        `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME_PART}')`,
      );
    }
  }
  return problems;
}

/** Messages for a label value that is not valid. */
export function validateLabelValue(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (!labelValueRe.test(value)) {
    problems.push(
      `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`,
    );
  }
  return problems;
}

/** Total annotation size limit (`TotalAnnotationSizeLimitB`). */
const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/**
 * Validates `metadata` of an object about to be stored: name, labels,
 * annotations, ownerReferences.
 */
export function validateObjectMeta(
  metadata: Record<string, any>,
  nameValidation: NameValidation,
): FieldError[] {
  const errors: FieldError[] = [];
  const name: unknown = metadata.name;
  if (typeof name !== 'string' || name === '') {
    errors.push({
      type: 'FieldValueRequired',
      field: 'metadata.name',
      detail: 'name or generateName is required',
    });
  } else {
    for (const detail of validateName(name, nameValidation)) {
      errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: name, detail });
    }
  }
  const labels = metadata.labels ?? {};
  if (typeof labels !== 'object' || Array.isArray(labels)) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.labels',
      value: String(labels),
      detail: 'must be a map of string to string',
    });
  } else {
    for (const [key, value] of Object.entries(labels)) {
      for (const detail of validateQualifiedName(key)) {
        errors.push({ type: 'FieldValueInvalid', field: 'metadata.labels', value: key, detail });
      }
      if (typeof value !== 'string') {
        errors.push({
          type: 'FieldValueInvalid',
          field: 'metadata.labels',
          value: String(value),
          detail: 'label values must be strings',
        });
        continue;
      }
      for (const detail of validateLabelValue(value)) {
        errors.push({ type: 'FieldValueInvalid', field: 'metadata.labels', value, detail });
      }
    }
  }
  const annotations = metadata.annotations ?? {};
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const detail of validateQualifiedName(key.toLowerCase())) {
      errors.push({ type: 'FieldValueInvalid', field: 'metadata.annotations', value: key, detail });
    }
    annotationBytes += Buffer.byteLength(key) + Buffer.byteLength(String(value));
  }
  if (annotationBytes > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.annotations',
      value: '',
      detail: `must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes`,
    });
  }
  const owners = metadata.ownerReferences ?? [];
  if (!Array.isArray(owners)) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.ownerReferences',
      value: '',
      detail: 'must be a list',
    });
  } else {
    owners.forEach((ref: any, i: number) => {
      for (const required of ['apiVersion', 'kind', 'name', 'uid']) {
        if (typeof ref?.[required] !== 'string' || ref[required] === '') {
          errors.push({
            type: 'FieldValueRequired' as const,
            field: `metadata.ownerReferences[${i}].${required}`,
            detail: `${required} must not be empty`,
          });
        }
      }
    });
    if (owners.filter((r: any) => r?.controller === true).length > 1) {
      errors.push({
        type: 'FieldValueInvalid',
        field: 'metadata.ownerReferences',
        value: '',
        detail: 'Only one reference can have Controller set to true',
      });
    }
  }
  return errors;
}
