/*
 * The failed-step record of the browser tests, with a real headless Chromium (no backend, no
 * app: pages are set from HTML) and a temporary directory in place of test-results.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser';
import { recordFailedSteps, withoutQueryValues } from './recordFailedSteps';

describe('recordFailedSteps (headless Chromium)', () => {
  let browser: Browser;
  let dir: string;
  const windows: Record<string, Page> = {};

  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'failed-steps-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a screenshot and the address of every open window when a step fails, and rethrows', async () => {
    windows.alice = await browser.newPage();
    await windows.alice.goto('data:text/html,<h1>alice</h1>');
    windows.bob = await browser.newPage();
    await windows.bob.close();
    const step = recordFailedSteps('suite', () => windows, dir);

    await expect(
      step('reveal secret', async () => {
        throw new Error('the reveal button never appeared');
      })(),
    ).rejects.toThrow('the reveal button never appeared');

    expect(fs.readdirSync(dir).sort()).toEqual([
      'suite-reveal-secret-alice.png',
      'suite-reveal-secret.txt',
    ]);
    const png = fs.readFileSync(path.join(dir, 'suite-reveal-secret-alice.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(fs.readFileSync(path.join(dir, 'suite-reveal-secret.txt'), 'utf8')).toBe(
      'alice: data:text/html,<h1>alice</h1> — suite-reveal-secret-alice.png\n',
    );
    await windows.alice.close();
  });

  it('records nothing for a step that passes, and removes the suite’s records of an earlier run', async () => {
    fs.writeFileSync(path.join(dir, 'suite-old-alice.png'), '');
    fs.writeFileSync(path.join(dir, 'other-old.txt'), '');
    const step = recordFailedSteps('suite', () => ({}), dir);
    expect(fs.readdirSync(dir)).toEqual(['other-old.txt']);
    await step('passes', async () => undefined)();
    expect(fs.readdirSync(dir)).toEqual(['other-old.txt']);
  });

  it('keeps the names of an address’s query, not their values', () => {
    expect(
      withoutQueryValues('http://127.0.0.1:9/callback?code=abc&state=xyz&code=def#access_token=t'),
    ).toBe('http://127.0.0.1:9/callback?code=…&state=…#…');
    expect(withoutQueryValues('http://localhost:3000/portal/keys')).toBe(
      'http://localhost:3000/portal/keys',
    );
  });
});
