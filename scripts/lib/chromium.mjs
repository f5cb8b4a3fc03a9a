// The Chromium the browser tests drive (packages/backend/src/e2e/browser): the system's, since
// Playwright's own browser download cannot work here. `yarn test` provides it where the machine
// allows: an existing one (PORTAL_BROWSER_CHROMIUM, or chromium on PATH), else Debian's
// `chromium` package installed non-interactively when running as root with apt-get (what CI is).
// Where none can be had, the caller prints one line naming the command to run.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** What a person without Chromium is told to run. */
export const CHROMIUM_INSTALL_HINT =
  'sudo apt-get install -y chromium (or set PORTAL_BROWSER_CHROMIUM to a Chromium executable)';

const NAMES = ['chromium', 'chromium-browser'];

/** An executable named `name` on PATH, if any. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The Chromium already on this machine, or undefined. */
export function findChromium() {
  const named = process.env.PORTAL_BROWSER_CHROMIUM;
  if (named) return fs.existsSync(named) ? named : undefined;
  for (const name of NAMES) {
    const found =
      onPath(name) ?? (fs.existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined);
    if (found) return found;
  }
  return undefined;
}

/**
 * The Chromium to use, installing Debian's package first when none is there and this process
 * may (root, apt-get present). Returns undefined when none can be had.
 */
export function provideChromium(log) {
  const found = findChromium();
  if (found || process.env.PORTAL_BROWSER_CHROMIUM) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !onPath('apt-get')) return undefined;
  log("Chromium is not installed: installing Debian's chromium package for the browser tests\n");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = args =>
    spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  if (
    !run(['update', '-qq']) ||
    !run(['install', '-y', '-qq', '--no-install-recommends', 'chromium'])
  ) {
    return undefined;
  }
  const installed = findChromium();
  if (installed) log(`${execFileSync(installed, ['--version'], { encoding: 'utf8' }).trim()}\n`);
  return installed;
}
