/*
 * What a browser test keeps of a step that failed, so that a failure in CI can be seen and not
 * only read: a full-page screenshot of every window the test has open and the address each one
 * was at, in test-results/browser-failures (beside the run's screenshots; test-results is the
 * directory a CI run keeps as its artifact, and nothing in it is committed).
 *
 * Failure records have a directory of their own because the run's screenshot directory is
 * emptied by the portal browser test when it starts: a record of another browser test that ran
 * before it in the same run would be lost. Each suite removes its own old records when it
 * starts (its name is the records' prefix), so what is there belongs to the latest run of it.
 *
 * The record holds no error message — a failed expectation can quote what the page showed (a
 * revealed secret, a token); the test's own output has the message — and an address keeps its
 * query's names, not their values (an OAuth callback carries a code).
 */
import fs from 'node:fs';
import path from 'node:path';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import type { Page } from 'playwright-core';

/** Where failed steps are recorded: `<suite>-<step>-<window>.png` and `<suite>-<step>.txt`. */
export const FAILED_STEPS_DIR = path.join(
  resolvePackagePath('backend'),
  'test-results',
  'browser-failures',
);

/** Wraps a test step's body: runs it, and records the windows when it fails (then rethrows). */
export type RecordedStep = (name: string, body: () => Promise<void>) => () => Promise<void>;

/**
 * A file name part from free text: letters, digits, dots and dashes only.
 */
const fileSafe = (text: string) => text.replace(/[^A-Za-z0-9.-]+/g, '-');

/**
 * Records the failed steps of the browser test `suite` (a short name, the records' prefix):
 * removes the suite's records of an earlier run now, and returns the wrapper for its steps.
 * `windows` names the windows open at the moment of a failure (a closed one is left out).
 */
export function recordFailedSteps(
  suite: string,
  windows: () => Record<string, Page>,
  dir: string = FAILED_STEPS_DIR,
): RecordedStep {
  const prefix = `${fileSafe(suite)}-`;
  if (fs.existsSync(dir)) {
    for (const file of fs.readdirSync(dir)) {
      if (file.startsWith(prefix)) fs.rmSync(path.join(dir, file), { force: true });
    }
  }
  return (name, body) => async () => {
    try {
      await body();
    } catch (error) {
      await record(dir, `${prefix}${fileSafe(name)}`, windows()).catch(() => undefined);
      throw error;
    }
  };
}

/** `url` with each query parameter's value, and the fragment, replaced by `…`. */
export function withoutQueryValues(url: string): string {
  const parsed = new URL(url);
  const names = [...new Set(parsed.searchParams.keys())];
  const query = names.length === 0 ? '' : `?${names.map(name => `${name}=…`).join('&')}`;
  const fragment = parsed.hash === '' ? '' : '#…';
  return `${parsed.origin === 'null' ? parsed.protocol : parsed.origin}${parsed.pathname}${query}${fragment}`;
}

/** Writes the screenshots and the addresses of `windows` as `<base>-<window>.png` and `<base>.txt`. */
async function record(dir: string, base: string, windows: Record<string, Page>): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  for (const [window, page] of Object.entries(windows)) {
    if (page.isClosed()) continue;
    const file = `${base}-${fileSafe(window)}.png`;
    const shot = await page.screenshot({ path: path.join(dir, file), fullPage: true }).then(
      () => file,
      (error: Error) => `no screenshot (${error.message.split('\n')[0]})`,
    );
    lines.push(`${window}: ${withoutQueryValues(page.url())} — ${shot}`);
  }
  if (lines.length === 0) lines.push('no window was open');
  fs.writeFileSync(path.join(dir, `${base}.txt`), `${lines.join('\n')}\n`);
}
