/*
 * The READMEs' walkthroughs as doctests (testing/readmeWalkthrough.ts has the format): each
 * README's runnable ```sh blocks, block by block, in one shell against a fresh development
 * backend, with the output each step promises checked — so a README that drifts from the product
 * fails here. Which READMEs: testing/readmeWalkthroughs.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseWalkthrough } from '../testing/readmeWalkthrough';
import { README_WALKTHROUGHS } from '../testing/readmeWalkthroughs';
import { STEP_TIMEOUT_MS, WalkthroughEnvironment } from './__testUtils__/WalkthroughEnvironment';

const repoRoot = path.resolve(__dirname, '../../../..');

describe.each(Object.values(README_WALKTHROUGHS))(
  '$path: the walkthroughs, run against the development backend',
  walkthrough => {
    const blocks = parseWalkthrough(
      fs.readFileSync(path.join(repoRoot, walkthrough.path), 'utf8'),
      walkthrough.skipFirst,
    ).filter(block => block.skipReason === undefined);
    let environment: WalkthroughEnvironment;

    beforeAll(async () => {
      environment = await WalkthroughEnvironment.start();
    }, 180_000);

    afterAll(async () => {
      await environment?.stop();
    }, 30_000);

    it.each(
      blocks.map(block => ({
        where: `${block.headings.slice(1).join(' › ') || 'top'} (line ${block.line})`,
        block,
      })),
    )(
      '$where shows what the README says',
      async ({ block }) => {
        for (const step of block.steps) {
          expect(await environment.run(walkthrough.path, step)).toBeUndefined();
        }
      },
      STEP_TIMEOUT_MS * 2,
    );
  },
);
