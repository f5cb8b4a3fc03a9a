import type { ReadOnlyObject } from '@devportal/plugin-portal-common';
import path from 'node:path';

import { ManifestResourceSource } from './ManifestResourceSource';
import {
  AUTHORINO_SECRET_LABEL,
  keySecretLabelsForRoute,
  keySecretLabelsOfPolicies,
} from './keySecretLabelsForRoute';

const AUTHORINO = { [AUTHORINO_SECRET_LABEL]: 'authorino' };
const ROUTE_REF = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' };

function authPolicy(
  name: string,
  spec: unknown,
  options: { namespace?: string; kind?: string } = {},
): ReadOnlyObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: options.kind ?? 'AuthPolicy',
    metadata: { namespace: options.namespace ?? 'toystore', name },
    spec,
  };
}

/** An AuthPolicy spec with one apiKey rule per entry of `rules` (rule name → matchLabels). */
function apiKeySpec(
  rules: Record<string, Record<string, string> | undefined>,
  targetRef: Record<string, string> = ROUTE_REF,
) {
  return {
    targetRef,
    rules: {
      authentication: Object.fromEntries(
        Object.entries(rules).map(([rule, matchLabels]) => [
          rule,
          {
            apiKey: { selector: matchLabels ? { matchLabels } : {} },
            credentials: { authorizationHeader: { prefix: 'APIKEY' } },
          },
        ]),
      ),
    },
  };
}

const labelsFor = (policies: ReadOnlyObject[], routeName = 'toystore') =>
  keySecretLabelsOfPolicies(policies, 'toystore', routeName);

describe('keySecretLabelsOfPolicies', () => {
  it('takes the apiKey selector of a policy targeting the route, plus the Authorino label', () => {
    expect(labelsFor([authPolicy('auth', apiKeySpec({ keys: { app: 'toystore' } }))])).toEqual({
      app: 'toystore',
      ...AUTHORINO,
    });
    // No group is the Gateway API's too.
    const { group: _, ...withoutGroup } = ROUTE_REF;
    expect(
      labelsFor([authPolicy('auth', apiKeySpec({ keys: { app: 'toystore' } }, withoutGroup))]),
    ).toEqual({ app: 'toystore', ...AUTHORINO });
  });

  it('ignores policies of other routes, other namespaces, Gateways, other groups and other kinds', () => {
    const rule = { keys: { app: 'toystore' } };
    expect(
      labelsFor([
        authPolicy('other-route', apiKeySpec(rule, { ...ROUTE_REF, name: 'toystore-admin' })),
        authPolicy('other-namespace', apiKeySpec(rule), { namespace: 'other' }),
        authPolicy(
          'gateway',
          apiKeySpec(rule, {
            group: 'gateway.networking.k8s.io',
            kind: 'Gateway',
            name: 'toystore',
          }),
        ),
        authPolicy('other-group', apiKeySpec(rule, { ...ROUTE_REF, group: 'example.com' })),
        authPolicy('plan', apiKeySpec(rule), { kind: 'PlanPolicy' }),
      ]),
    ).toEqual({});
  });

  it('is empty for a route whose policies have no apiKey rule', () => {
    expect(labelsFor([])).toEqual({});
    expect(
      labelsFor([
        authPolicy('jwt', {
          targetRef: ROUTE_REF,
          rules: { authentication: { sso: { jwt: { issuerUrl: 'https://sso.example.com' } } } },
        }),
        authPolicy('no-rules', { targetRef: ROUTE_REF }),
      ]),
    ).toEqual({});
  });

  it('unites the selectors of several rules and policies', () => {
    expect(
      labelsFor([
        authPolicy('b', apiKeySpec({ partners: { tier: 'partner' } })),
        authPolicy('a', apiKeySpec({ keys: { app: 'toystore' }, team: { team: 'toys' } })),
      ]),
    ).toEqual({ app: 'toystore', team: 'toys', tier: 'partner', ...AUTHORINO });
  });

  it('lets the first policy by name, then the first rule by name, win a conflicting label', () => {
    expect(
      labelsFor([
        authPolicy('zeta', apiKeySpec({ keys: { app: 'zeta' } })),
        authPolicy('alpha', apiKeySpec({ z: { app: 'alpha-z' }, a: { app: 'alpha-a' } })),
      ]),
    ).toEqual({ app: 'alpha-a', ...AUTHORINO });
  });

  it('adds the Authorino label for an apiKey rule without matchLabels, and keeps a value a policy names', () => {
    expect(labelsFor([authPolicy('auth', apiKeySpec({ keys: undefined }))])).toEqual(AUTHORINO);
    expect(
      labelsFor([
        authPolicy('auth', apiKeySpec({ keys: { [AUTHORINO_SECRET_LABEL]: 'custom', app: 'x' } })),
      ]),
    ).toEqual({ [AUTHORINO_SECRET_LABEL]: 'custom', app: 'x' });
  });

  it('ignores matchExpressions (not supported)', () => {
    const spec = apiKeySpec({ keys: { app: 'toystore' } });
    (spec.rules.authentication.keys.apiKey.selector as Record<string, unknown>).matchExpressions = [
      { key: 'env', operator: 'In', values: ['prod'] },
    ];
    expect(labelsFor([authPolicy('auth', spec)])).toEqual({ app: 'toystore', ...AUTHORINO });
  });

  it('skips policies without a valid shape and keeps the valid ones', () => {
    const valid = authPolicy('valid', apiKeySpec({ keys: { app: 'toystore' } }));
    expect(
      labelsFor([
        authPolicy('a-no-spec', undefined),
        authPolicy('b-no-target', { rules: apiKeySpec({ k: { bad: 'x' } }).rules }),
        authPolicy('c-rules-list', { targetRef: ROUTE_REF, rules: [] }),
        authPolicy('d-selector-missing', {
          targetRef: ROUTE_REF,
          rules: { authentication: { k: { apiKey: {} } } },
        }),
        authPolicy('e-number-label', {
          targetRef: ROUTE_REF,
          rules: { authentication: { k: { apiKey: { selector: { matchLabels: { app: 1 } } } } } },
        }),
        authPolicy('f-bad-label-value', apiKeySpec({ k: { app: 'not a label value' } })),
        authPolicy('g-bad-label-key', apiKeySpec({ k: { 'Bad_Prefix/app': 'x' } })),
        valid,
      ]),
    ).toEqual({ app: 'toystore', ...AUTHORINO });
  });

  it('reads the toystore example through a resource source', async () => {
    const file = path.resolve(__dirname, '../../../../examples/toystore.yaml');
    const source = await ManifestResourceSource.fromFiles([file]);
    expect(await keySecretLabelsForRoute(source, 'toystore', 'toystore')).toEqual({
      app: 'toystore',
      ...AUTHORINO,
    });
    expect(await keySecretLabelsForRoute(source, 'toystore', 'toystore-admin')).toEqual({});
  });
});
