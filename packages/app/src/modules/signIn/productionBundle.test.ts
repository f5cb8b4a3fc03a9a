/**
 * @jest-environment node
 */
/*
 * The development sign-in page (any fixture user, no password) must not exist in a production
 * bundle. ./index.ts chooses the page by `process.env.NODE_ENV`, which a bundler replaces by a
 * constant and folds: the production branch's import is the only one left. This bundles the
 * module as a production and as a development build would (esbuild, the same define and
 * constant folding `backstage-cli package build` applies through its bundler; a full production
 * build of the app costs minutes) and looks for the development page in what comes out.
 */
import { build } from 'esbuild';
import path from 'node:path';

/** Strings only the development sign-in page's module has (its heading, its storage key). */
const DEV_PAGE_MARKERS = ['Sign in (development)', 'devportal.devSignIn.user'];
/** The provider both pages sign in with: proof that a sign-in page is in the bundle at all. */
const PROVIDER_MARKER = 'oauth2Proxy';

/** Everything the bundler emits for ./index.ts in the given mode, as one text. */
async function bundleText(mode: 'production' | 'development'): Promise<string> {
  const result = await build({
    entryPoints: [path.join(__dirname, 'index.ts')],
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'esm',
    splitting: true,
    platform: 'browser',
    packages: 'external',
    jsx: 'automatic',
    minifySyntax: true,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': JSON.stringify(mode) },
  });
  return result.outputFiles.map(file => file.text).join('\n');
}

describe('the sign-in page in a bundle (esbuild)', () => {
  it('leaves the development sign-in page out of a production bundle', async () => {
    const text = await bundleText('production');
    expect(text).toContain(PROVIDER_MARKER);
    for (const marker of DEV_PAGE_MARKERS) expect(text).not.toContain(marker);
    expect(text).not.toContain('DevSignInPage');
  });

  it('keeps it in a development bundle (the markers above do find it)', async () => {
    const text = await bundleText('development');
    for (const marker of DEV_PAGE_MARKERS) expect(text).toContain(marker);
  });
});
