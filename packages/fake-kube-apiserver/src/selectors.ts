/**
 * Label and field selectors with the grammar of `k8s.io/apimachinery/pkg/labels`
 * and `pkg/fields`: equality (`=`, `==`), inequality (`!=`), set-based
 * (`in`, `notin`), existence (`key`, `!key`) and numeric `>`/`<`.
 */
import { badRequest } from './statusErrors';
import { validateLabelValue, validateQualifiedName } from './validation';

type Operator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | '>' | '<';

interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

/** A parsed selector; `matches` takes the object's labels. */
export interface LabelSelector {
  matches(labels: Record<string, string> | undefined): boolean;
  readonly empty: boolean;
}

type Token =
  | { kind: 'id'; text: string }
  | { kind: 'op'; text: string }
  | { kind: 'open' }
  | { kind: 'close' }
  | { kind: 'comma' }
  | { kind: 'end' };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(') {
      tokens.push({ kind: 'open' });
      i++;
    } else if (c === ')') {
      tokens.push({ kind: 'close' });
      i++;
    } else if (c === ',') {
      tokens.push({ kind: 'comma' });
      i++;
    } else if ('=!<>'.includes(c)) {
      const two = input.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: 'op', text: two });
        i += 2;
      } else {
        tokens.push({ kind: 'op', text: c });
        i++;
      }
    } else {
      let j = i;
      while (j < input.length && !/[\s(),=!<>]/.test(input[j])) j++;
      tokens.push({ kind: 'id', text: input.slice(i, j) });
      i = j;
    }
  }
  tokens.push({ kind: 'end' });
  return tokens;
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'id':
    case 'op':
      return t.text;
    case 'open':
      return '(';
    case 'close':
      return ')';
    case 'comma':
      return ',';
    default:
      return 'end of string';
  }
}

/**
 * Parses a `labelSelector` query value; throws a 400 BadRequest Status with a
 * message in the spirit of `labels.Parse` when it is malformed.
 */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const fail = (found: Token, expected: string) => {
    throw badRequest(
      `unable to parse requirement: found '${describe(found)}', expected: ${expected}`,
    );
  };
  const requirements: Requirement[] = [];

  const readValues = (): string[] => {
    const open = next();
    if (open.kind !== 'open') fail(open, "'('");
    const values: string[] = [];
    for (;;) {
      const t = next();
      if (t.kind === 'close' && values.length === 0) return values;
      if (t.kind !== 'id') fail(t, "',', ')' or identifier");
      values.push((t as { text: string }).text);
      const sep = next();
      if (sep.kind === 'close') return values;
      if (sep.kind !== 'comma') fail(sep, "',' or ')'");
    }
  };

  while (peek().kind !== 'end') {
    let negated = false;
    if (peek().kind === 'op' && (peek() as { text: string }).text === '!') {
      negated = true;
      next();
    }
    const keyToken = next();
    if (keyToken.kind !== 'id') fail(keyToken, 'identifier');
    const key = (keyToken as { text: string }).text;
    const keyProblems = validateQualifiedName(key);
    if (keyProblems.length > 0) {
      throw badRequest(
        `unable to parse requirement: key: Invalid value: "${key}": ${keyProblems.join('; ')}`,
      );
    }
    let requirement: Requirement;
    const t = peek();
    if (negated) {
      requirement = { key, operator: '!', values: [] };
    } else if (t.kind === 'comma' || t.kind === 'end') {
      requirement = { key, operator: 'exists', values: [] };
    } else if (t.kind === 'op') {
      next();
      const opText = (t as { text: string }).text;
      const valueToken = peek();
      let value = '';
      if (valueToken.kind === 'id') {
        next();
        value = valueToken.text;
      } else if (valueToken.kind !== 'comma' && valueToken.kind !== 'end') {
        fail(valueToken, 'identifier');
      }
      const operator: Operator = opText === '!=' || opText === '>' || opText === '<' ? opText : '=';
      if (opText === '!') fail(t, "'=', '!=', '==', 'in', 'notin'");
      if ((operator === '>' || operator === '<') && !/^-?\d+$/.test(value)) {
        throw badRequest(
          `unable to parse requirement: values[0]: Invalid value: "${value}": for 'Gt', 'Lt' operators, the value must be an integer`,
        );
      }
      requirement = { key, operator, values: [value] };
    } else if (t.kind === 'id' && (t.text === 'in' || t.text === 'notin')) {
      next();
      requirement = { key, operator: t.text, values: readValues() };
      if (requirement.values.length === 0) {
        throw badRequest(
          `unable to parse requirement: values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty`,
        );
      }
    } else {
      fail(t, "'=', '!=', '==', 'in', 'notin'");
      throw new Error('unreachable');
    }
    requirement.values.forEach((v, i) => {
      if (requirement.operator === '>' || requirement.operator === '<') return;
      const problems = validateLabelValue(v);
      if (problems.length > 0) {
        throw badRequest(
          `unable to parse requirement: values[${i}][${key}]: Invalid value: "${v}": ${problems.join('; ')}`,
        );
      }
    });
    requirements.push(requirement);
    const sep = next();
    if (sep.kind === 'end') break;
    if (sep.kind !== 'comma') fail(sep, "',' or 'end of string'");
  }

  return {
    empty: requirements.length === 0,
    matches(labels) {
      const l = labels ?? {};
      return requirements.every(r => matchRequirement(r, l));
    },
  };
}

function matchRequirement(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case '=':
      return has && value === r.values[0];
    case '!=':
      return !has || value !== r.values[0];
    case 'in':
      return has && r.values.includes(value);
    case 'notin':
      return !has || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case '>':
    case '<': {
      if (!has || !/^-?\d+$/.test(value)) return false;
      const n = Number(value);
      const bound = Number(r.values[0]);
      return r.operator === '>' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** A parsed field selector over the fields a resource supports. */
export interface FieldSelector {
  matches(fields: Record<string, string>): boolean;
  readonly empty: boolean;
}

/**
 * Parses a `fieldSelector` (`a=b`, `a==b`, `a!=b`, comma-separated); a field
 * the resource does not support answers 400 like the real server.
 */
export function parseFieldSelector(
  input: string,
  supportedFields: readonly string[],
): FieldSelector {
  const terms: Array<{ field: string; value: string; negate: boolean }> = [];
  for (const raw of input.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(part);
    if (!m) {
      throw badRequest(`invalid selector: '${input}'; can't understand '${part}'`);
    }
    const field = m[1].trim();
    if (!supportedFields.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    terms.push({ field, value: m[3].trim(), negate: m[2] === '!=' });
  }
  return {
    empty: terms.length === 0,
    matches(fields) {
      return terms.every(t => (fields[t.field] === t.value) !== t.negate);
    },
  };
}
