import fs from 'node:fs';
import path from 'node:path';
import { BashSession } from './BashSession';
import { matchesExpectation, parseWalkthrough } from './readmeWalkthrough';
import { README_WALKTHROUGHS } from './readmeWalkthroughs';

const repoRoot = path.resolve(__dirname, '../../../..');

describe('parseWalkthrough', () => {
  const markdown = [
    '# Title',
    '```sh',
    'yarn install',
    '```',
    '## Sign in',
    '```sh',
    'A=1',
    'echo $A',
    '# → 1',
    '# comment, not output',
    'echo two; echo lines',
    '# → two',
    '# → lines',
    'true',
    '```',
    '<!-- doctest: skip — opens an editor -->',
    '',
    '```sh',
    'code .',
    '```',
    '```ts',
    'const notShell = 1;',
    '```',
  ].join('\n');

  it('splits blocks into steps with their promised output, under their headings', () => {
    const blocks = parseWalkthrough(markdown, 1);
    expect(blocks).toEqual([
      {
        headings: ['Title'],
        line: 2,
        skipReason: 'a set-up command, run by .ci/run itself',
        steps: [{ code: 'yarn install', expected: undefined, line: 3 }],
      },
      {
        headings: ['Title', 'Sign in'],
        line: 6,
        skipReason: undefined,
        steps: [
          { code: 'A=1\necho $A', expected: ['1'], line: 7 },
          {
            code: '# comment, not output\necho two; echo lines',
            expected: ['two', 'lines'],
            line: 10,
          },
          { code: 'true', expected: undefined, line: 14 },
        ],
      },
      {
        headings: ['Title', 'Sign in'],
        line: 18,
        skipReason: 'opens an editor',
        steps: [{ code: 'code .', expected: undefined, line: 19 }],
      },
    ]);
  });

  it('refuses a misspelt directive and an expectation without a command', () => {
    expect(() => parseWalkthrough('<!-- doctest: skipp — x -->\n```sh\nls\n```')).toThrow(
      /line 1: unknown doctest directive/,
    );
    expect(() => parseWalkthrough('<!-- doctest: skip -->\n```sh\nls\n```')).toThrow(
      /unknown doctest directive/,
    );
    expect(() => parseWalkthrough('```sh\n# → out\n```')).toThrow(
      /line 2: a "# →" expectation follows no command/,
    );
  });
});

describe('matchesExpectation', () => {
  it('matches literally, with … for any text, ignoring trailing blanks', () => {
    expect(matchesExpectation(['{"a":1}'], '{"a":1}\n\n')).toBe(true);
    expect(matchesExpectation(['{"a":1}'], '{"a":2}')).toBe(false);
    expect(matchesExpectation(['{"id":"…","n":1}'], '{"id":"x-9","n":1}')).toBe(true);
    expect(matchesExpectation(['{"id":"…","n":1}'], '{"id":"x-9","n":2}')).toBe(false);
    expect(matchesExpectation(['first', '…', 'last'], 'first\na\nb\nlast')).toBe(true);
    expect(matchesExpectation(['a.c'], 'abc')).toBe(false);
    expect(matchesExpectation(['one'], 'one\ntwo')).toBe(false);
  });
});

describe('BashSession', () => {
  it('keeps variables and functions between steps and reports each status', async () => {
    const shell = new BashSession(repoRoot, { PATH: process.env.PATH ?? '/usr/bin:/bin' });
    try {
      expect(await shell.run('X=42; hello() { echo "hi $1"; }', 5_000)).toEqual({
        stdout: '',
        stderr: '',
        status: 0,
      });
      const second = await shell.run('hello $X; echo oops >&2; false', 5_000);
      expect(second).toEqual({ stdout: 'hi 42\n', stderr: 'oops\n', status: 1 });
      // A step that reads standard input gets nothing and cannot swallow the next step.
      expect((await shell.run('cat; printf done', 5_000)).stdout).toBe('done');
    } finally {
      await shell.close();
    }
  });
});

describe('the READMEs run as doctests', () => {
  const readmes = ['README.md', 'packages', 'plugins'].flatMap(entry =>
    entry === 'README.md'
      ? [entry]
      : fs
          .readdirSync(path.join(repoRoot, entry))
          .map(name => path.join(entry, name, 'README.md'))
          .filter(file => fs.existsSync(path.join(repoRoot, file))),
  );
  const listed = new Map(Object.values(README_WALKTHROUGHS).map(r => [r.path, r.skipFirst]));
  const runnableBlocks = (readme: string) =>
    parseWalkthrough(fs.readFileSync(path.join(repoRoot, readme), 'utf8'), listed.get(readme))
      .filter(block => block.skipReason === undefined)
      .map(block => `line ${block.line}`);

  it.each(readmes.filter(readme => !listed.has(readme)))(
    '%s has no runnable ```sh block outside the walkthrough suites',
    readme => {
      expect(runnableBlocks(readme)).toEqual([]);
    },
  );

  it.each([...listed.keys()])('%s has walkthrough steps to run', readme => {
    expect(runnableBlocks(readme).length).toBeGreaterThan(0);
  });
});
