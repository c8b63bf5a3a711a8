import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** Repository root, found from the compiled location dist/test/helpers/paths.js. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const fixturesDir = join(repoRoot, 'test', 'fixtures');
/** ../shared beside the checkout, when present (CI puts it there). */
export const sharedDir = join(repoRoot, '..', 'shared');
