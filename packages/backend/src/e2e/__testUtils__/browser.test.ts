/*
 * The README screenshot switch of the browser helpers: an ordinary run leaves the committed
 * screenshots alone; only the explicit flag points at the portal plugin's README set.
 */
import fs from 'node:fs';
import path from 'node:path';
import { README_SCREENSHOTS_ENV, readmeScreenshotDir } from './browser';

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
