import { AuthorizeResult, PolicyDecision } from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import {
  BrokerToolResource,
  globMatcher,
  hasToolAnnotationRule,
  toolAnnotation,
  createBrokerRules,
} from './rules';

describe('HAS_NAME globs', () => {
  it('matches case-sensitively, with * as any run of characters (none included)', () => {
    const matches = globMatcher(['get_*', '*-report', 'exact']);
    expect(matches('get_user')).toBe(true);
    expect(matches('get_')).toBe(true);
    expect(matches('GET_user')).toBe(false);
    expect(matches('weekly-report')).toBe(true);
    expect(matches('exact')).toBe(true);
    expect(matches('exactly')).toBe(false);
    expect(matches('xexact')).toBe(false);
  });

  it('reads ? as one character only when asked (tool-name globs of curated endpoints)', () => {
    const matches = globMatcher(['e?ho', 'a.?'], { anyOneCharacter: true });
    expect(matches('echo')).toBe(true);
    expect(matches('e?ho')).toBe(true);
    expect(matches('eho')).toBe(false);
    expect(matches('eccho')).toBe(false);
    expect(matches('a.b')).toBe(true);
    expect(matches('aXb')).toBe(false);
    expect(globMatcher(['e?ho'])('echo')).toBe(false);
  });

  it('treats every character but * literally (?, [, ., regex syntax) and * across slashes', () => {
    const matches = globMatcher(['what?', '[a]', 'a.b', 'file:///docs/*', '(x)+']);
    expect(matches('what?')).toBe(true);
    expect(matches('whatX')).toBe(false);
    expect(matches('[a]')).toBe(true);
    expect(matches('a')).toBe(false);
    expect(matches('a.b')).toBe(true);
    expect(matches('aXb')).toBe(false);
    expect(matches('file:///docs/a/b/c.md')).toBe(true);
    expect(matches('(x)+')).toBe(true);
    expect(matches('xx')).toBe(false);
  });

  it('matches nothing with no patterns, and everything with "*"', () => {
    expect(globMatcher([])('echo')).toBe(false);
    expect(globMatcher(['*'])('')).toBe(true);
    expect(globMatcher(['*'])('line\nbreak')).toBe(true);
  });
});

describe('HAS_TOOL_ANNOTATION', () => {
  const bare: BrokerToolResource = { server: 'example', name: 'add_tool' };

  it("takes MCP's defaults when a tool declares nothing", () => {
    expect(toolAnnotation(bare, 'readOnlyHint')).toBe(false);
    expect(toolAnnotation(bare, 'destructiveHint')).toBe(true);
    expect(toolAnnotation(bare, 'idempotentHint')).toBe(false);
    expect(toolAnnotation(bare, 'openWorldHint')).toBe(true);
  });

  it('uses declared booleans and ignores declared values of another type', () => {
    const tool = {
      ...bare,
      annotations: { readOnlyHint: true, destructiveHint: 'no', openWorldHint: false },
    };
    expect(hasToolAnnotationRule.apply(tool, { annotation: 'readOnlyHint', value: true })).toBe(
      true,
    );
    expect(hasToolAnnotationRule.apply(tool, { annotation: 'destructiveHint', value: true })).toBe(
      true,
    );
    expect(hasToolAnnotationRule.apply(tool, { annotation: 'openWorldHint', value: false })).toBe(
      true,
    );
    expect(hasToolAnnotationRule.apply(bare, { annotation: 'readOnlyHint', value: true })).toBe(
      false,
    );
  });

  it('refuses parameters a policy could misspell, with a message that says what to fix', () => {
    const validate = (value: unknown) =>
      hasToolAnnotationRule.paramsSchema!['~standard'].validate(value);
    expect(validate({ annotation: 'readOnlyHint', value: true })).toEqual({
      value: { annotation: 'readOnlyHint', value: true },
    });
    expect(validate({ annotation: 'readonlyHint', value: true })).toMatchObject({
      issues: [{ message: expect.stringMatching(/annotation must be one of readOnlyHint/) }],
    });
    expect(validate({ annotation: 'readOnlyHint', value: 'true' })).toMatchObject({
      issues: [{ message: 'value must be true or false' }],
    });
  });
});

describe('tool rules combined in a conditional decision (as RBAC sends them)', () => {
  // The fixture's mcp-user condition: read-only tools anywhere, plus three named example tools.
  const decision: PolicyDecision = {
    result: AuthorizeResult.CONDITIONAL,
    pluginId: 'mcp-broker',
    resourceType: 'mcp-broker-tool',
    conditions: {
      anyOf: [
        {
          rule: 'HAS_TOOL_ANNOTATION',
          resourceType: 'mcp-broker-tool',
          params: { annotation: 'readOnlyHint', value: true },
        },
        {
          allOf: [
            {
              rule: 'IS_ON_SERVER',
              resourceType: 'mcp-broker-tool',
              params: { servers: ['example'] },
            },
            {
              rule: 'HAS_NAME',
              resourceType: 'mcp-broker-tool',
              params: { patterns: ['echo', 'count', 'confirm'] },
            },
          ],
        },
      ],
    },
  };
  const allowed = createConditionAuthorizer(createBrokerRules().tool);

  it('allows read-only tools of any server and the named tools of the named server only', () => {
    expect(
      allowed(decision, {
        server: 'everything',
        name: 'get-env',
        annotations: { readOnlyHint: true },
      }),
    ).toBe(true);
    expect(allowed(decision, { server: 'example', name: 'echo' })).toBe(true);
    expect(allowed(decision, { server: 'other', name: 'echo' })).toBe(false);
    expect(
      allowed(decision, {
        server: 'example',
        name: 'add_tool',
        annotations: { readOnlyHint: false },
      }),
    ).toBe(false);
    expect(allowed(decision, { server: 'example', name: 'Echo' })).toBe(false);
  });
});
