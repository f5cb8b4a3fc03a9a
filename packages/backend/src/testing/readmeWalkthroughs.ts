/*
 * The READMEs whose ```sh blocks run as doctests, one e2e suite each (e2e/readme*.test.ts).
 * readmeWalkthrough.test.ts checks that every README of the repository with a runnable block is
 * listed here, so a walkthrough added elsewhere cannot go unrun.
 */

/** A README run as a doctest: its path from the repository root and how to read it. */
export interface ReadmeWalkthrough {
  path: string;
  /** Leading ```sh blocks that are set-up commands, not walkthrough steps. */
  skipFirst?: number;
}

/** Every README with walkthroughs, by suite. */
export const README_WALKTHROUGHS: Record<'root' | 'portal' | 'broker', ReadmeWalkthrough> = {
  root: { path: 'README.md', skipFirst: 2 },
  portal: { path: 'plugins/portal-backend/README.md' },
  broker: { path: 'plugins/mcp-broker-backend/README.md' },
};
