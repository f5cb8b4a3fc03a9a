/*
 * The README screenshot switch of the browser helpers: an ordinary run leaves the committed
 * screenshots alone; only the explicit flag points at the portal plugin's README set. And the
 * app's browser windows (newAppContext, in the real Chromium) ask for unencoded responses, the
 * page's own requests included, so the dev server never gzips the bundle for them.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  launchChromium,
  newAppContext,
  README_SCREENSHOTS_ENV,
  readmeScreenshotDir,
} from './browser';

describe('readmeScreenshotDir', () => {
  it('names no directory on an ordinary run, so no committed file is rewritten', () => {
    expect(readmeScreenshotDir({})).toBeUndefined();
    expect(readmeScreenshotDir({ [README_SCREENSHOTS_ENV]: '0' })).toBeUndefined();
    expect(readmeScreenshotDir({ [README_SCREENSHOTS_ENV]: '' })).toBeUndefined();
  });

  it('names the directory the portal README shows its screenshots from when the flag is set', () => {
    const dir = readmeScreenshotDir({ [README_SCREENSHOTS_ENV]: '1' });
    expect(dir).toBe(readmeScreenshotDir({ [README_SCREENSHOTS_ENV]: 'true' }));
    expect(dir?.endsWith(path.join('plugins', 'portal', 'docs', 'screenshots'))).toBe(true);
    // The README references files in exactly this directory.
    expect(fs.existsSync(path.join(dir!, '05-catalog.png'))).toBe(true);
  });
});

describe('newAppContext', () => {
  it('asks for every response unencoded (Accept-Encoding: identity), scripts of the page included', async () => {
    const asked: Record<string, string | undefined> = {};
    const server = http.createServer((request, response) => {
      asked[request.url!] = request.headers['accept-encoding'];
      if (request.url === '/script.js') {
        response.writeHead(200, { 'content-type': 'text/javascript' });
        response.end('document.title = "loaded";');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><script src="/script.js"></script>');
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const browser = await launchChromium();
    try {
      const page = await (await newAppContext(browser)).newPage();
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      await page.waitForFunction(() => document.title === 'loaded');
      // (The favicon Chromium may ask for meanwhile is left out: when it asks is its own.)
      expect({ page: asked['/'], script: asked['/script.js'] }).toEqual({
        page: 'identity',
        script: 'identity',
      });
    } finally {
      await browser.close();
      await new Promise(resolve => server.close(resolve));
    }
  });
});
