/*
 * README walkthroughs as doctests: the `sh` blocks of a README are read into steps, each with the
 * output the README promises, so a test can run them one by one in one shell against the
 * development backend and fail when the product and the README drift apart.
 *
 * The format a README follows (README.md, "Tests and CI", says it for contributors):
 * - Every ```sh block runs, in document order, in one bash session per README: variables and
 *   functions carry over from block to block, as in the terminal of a reader who follows along.
 * - A block preceded by `<!-- doctest: skip — <reason> -->` (blank lines between are fine) does
 *   not run; the reason is required. Any other `<!-- doctest: … -->` comment is an error, so a
 *   misspelt directive cannot silently skip or run a block.
 * - `# → <text>` lines after a command are the output it promises: everything printed to
 *   standard output since the previous such lines (or the block's start) must equal them, where
 *   `…` stands for any text (also across lines). Trailing white space and blank lines at the end
 *   are ignored. Such a step's exit status is not checked (the output is the promise: a
 *   command that reports an error may well exit non-zero); a step with no such lines must
 *   succeed (exit status 0).
 */

/** One piece of a block: code to run and the output it promises, if it promises one. */
export interface WalkthroughStep {
  /** Bash source, possibly several lines. */
  code: string;
  /** The promised standard output, one entry per line (`…` matches anything); none: not checked. */
  expected?: string[];
  /** 1-based line in the README where the step's code starts. */
  line: number;
}

/** A ```sh block of a README. */
export interface WalkthroughBlock {
  /** The headings above the block, outermost first (for the test's name). */
  headings: string[];
  /** 1-based line of the opening fence. */
  line: number;
  /** Why the block does not run (a `doctest: skip` directive), or undefined when it runs. */
  skipReason?: string;
  steps: WalkthroughStep[];
}

const FENCE = /^```(\S*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const DIRECTIVE = /^<!--\s*doctest:(.*?)-->\s*$/;
const SKIP = /^\s*skip\s*[—–-]+\s*(\S.*?)\s*$/;
const EXPECTATION = /^# →(?: (.*))?$/;

/**
 * Reads the ```sh blocks of a Markdown document. `skipFirst` leaves out the first N blocks
 * without a directive (the root README's two set-up commands, which `.ci/run` runs itself).
 * Throws on a malformed directive or an expectation that follows no code.
 */
export function parseWalkthrough(markdown: string, skipFirst = 0): WalkthroughBlock[] {
  const lines = markdown.split('\n');
  const blocks: WalkthroughBlock[] = [];
  const headings: string[] = [];
  let pendingSkip: string | undefined;
  let shBlocksSeen = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    const directive = DIRECTIVE.exec(line.trim());
    if (directive) {
      const skip = SKIP.exec(directive[1]);
      if (!skip) {
        throw new Error(
          `line ${index + 1}: unknown doctest directive "${line.trim()}"; the only one is ` +
            '`<!-- doctest: skip — <reason> -->`',
        );
      }
      pendingSkip = skip[1];
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      headings.length = heading[1].length - 1;
      headings[heading[1].length - 1] = heading[2];
      pendingSkip = undefined;
      continue;
    }
    const fence = FENCE.exec(line);
    if (!fence) {
      if (line.trim() !== '') pendingSkip = undefined;
      continue;
    }
    const start = index;
    const body: string[] = [];
    for (index += 1; index < lines.length && !/^```\s*$/.test(lines[index]); index += 1) {
      body.push(lines[index]);
    }
    if (fence[1] !== 'sh') {
      pendingSkip = undefined;
      continue;
    }
    shBlocksSeen += 1;
    const implicitSkip = shBlocksSeen <= skipFirst && pendingSkip === undefined;
    blocks.push({
      headings: headings.filter(h => h !== undefined),
      line: start + 1,
      skipReason: implicitSkip ? 'a set-up command, run by .ci/run itself' : pendingSkip,
      steps: splitSteps(body, start + 2),
    });
    pendingSkip = undefined;
  }
  return blocks;
}

function splitSteps(body: string[], firstLine: number): WalkthroughStep[] {
  const steps: WalkthroughStep[] = [];
  let code: string[] = [];
  let codeLine = firstLine;
  let expected: string[] | undefined;
  const flush = () => {
    if (code.some(l => l.trim() !== '')) {
      steps.push({ code: code.join('\n'), expected, line: codeLine });
    }
    code = [];
    expected = undefined;
  };
  body.forEach((text, offset) => {
    const expectation = EXPECTATION.exec(text);
    if (expectation) {
      if (!code.some(l => l.trim() !== '')) {
        throw new Error(`line ${firstLine + offset}: a "# →" expectation follows no command`);
      }
      (expected ??= []).push(expectation[1] ?? '');
      return;
    }
    if (expected !== undefined) flush();
    if (code.length === 0) codeLine = firstLine + offset;
    code.push(text);
  });
  flush();
  return steps;
}

/** Whether `output` is what `expected` promises (see the format above). */
export function matchesExpectation(expected: string[], output: string): boolean {
  const normalize = (text: string) =>
    text
      .replace(/\r/g, '')
      .split('\n')
      .map(l => l.trimEnd())
      .join('\n')
      .replace(/\n+$/, '')
      .replace(/^\n+/, '');
  const pattern = normalize(expected.join('\n'))
    .split('…')
    .map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(`^${pattern}$`).test(normalize(output));
}
