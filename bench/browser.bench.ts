/**
 * The SDK's browser bundle size (docs/PERFORMANCE.md, "The SDK in a browser"): what a page
 * that imports the SDK downloads, minified and gzipped (zlib's default level 6; KB = 1,000
 * bytes), built exactly as `npm run bundle:browser` builds it (scripts/browser-bundle.mjs),
 * with the page's imports tree-shaken as any ESM bundler would:
 * - reading (svc-read.js): every export of packages/client/src/browser.ts (REST reads, field and call proof
 *   checks, the live feed), against the goal of 60 KB;
 * - reading and signing (svc-read-sign.js): packages/client/src/browser-sign.ts as well (call envelopes built and
 *   signed, the anchoring transaction built from a wallet), against the reading bundle of
 *   the same run (the ratio is what signing adds).
 * Each figure's notes name the packages that take the most bytes (esbuild's metafile), so
 * a growth shows where it came from. No network, no browser: esbuild only (~1 s).
 */
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BuildOptions, Metafile } from 'esbuild';
import { figure, type Figure, type Stat } from './harness.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The goal of issue 48 for reading, verifying and following the feed. */
const READ_GOAL_KB = 60;
/** How many of the largest packages each figure's notes name. */
const LARGEST_SHOWN = 6;

const one = (v: number): Stat => ({ median: v, min: v, max: v });

interface Sized {
  minified: number;
  gzipped: number;
  largest: string;
}

interface BundleScript {
  browserBuildOptions: (o: object) => BuildOptions;
  browserBundles: Record<'svc-read' | 'svc-read-sign', string>;
}
const script = (): Promise<BundleScript> => import(pathToFileURL(join(repoRoot, 'scripts', 'browser-bundle.mjs')).href) as Promise<BundleScript>;

async function sizeOf(contents: string): Promise<Sized> {
  const esbuild = await import('esbuild');
  const r = await esbuild.build({ ...(await script()).browserBuildOptions({ stdin: { contents } }), write: false });
  const code = r.outputFiles![0]!.contents;
  return { minified: code.length, gzipped: gzipSync(code).length, largest: largestPackages(r.metafile!) };
}

/** Minified bytes by package (or by file of this repository), largest first. */
function largestPackages(meta: Metafile): string {
  const by = new Map<string, number>();
  for (const [path, input] of Object.entries(Object.values(meta.outputs)[0]!.inputs)) {
    const inModules = path.lastIndexOf('node_modules/');
    const rest = path.slice(inModules + 'node_modules/'.length);
    const name = inModules < 0 ? 'this repository' : rest.split('/').slice(0, rest.startsWith('@') ? 2 : 1).join('/');
    by.set(name, (by.get(name) ?? 0) + input.bytesInOutput);
  }
  return [...by].sort((a, b) => b[1] - a[1]).slice(0, LARGEST_SHOWN).map(([n, b]) => `${n} ${(b / 1000).toFixed(1)}`).join(', ');
}

export default async function run(): Promise<Figure[]> {
  const { browserBundles } = await script();
  const read = await sizeOf(browserBundles['svc-read']);
  const signing = await sizeOf(browserBundles['svc-read-sign']);
  const kb = (b: number): number => Math.round(b / 10) / 100;
  return [
    figure({
      name: 'browser bundle: read + verify + feed, gzipped',
      unit: 'KB',
      value: one(kb(read.gzipped)),
      ceiling: { name: 'goal (issue 48)', ...one(READ_GOAL_KB) },
      maxRatio: 1,
      target: `<= ${READ_GOAL_KB} KB`,
      notes: `${kb(read.minified)} KB minified; largest packages, KB minified: ${read.largest}`,
    }),
    figure({
      name: 'browser bundle: with signing and anchoring, gzipped',
      unit: 'KB',
      value: one(kb(signing.gzipped)),
      ceiling: { name: 'read + verify + feed bundle (same run)', ...one(kb(read.gzipped)) },
      notes: `${kb(signing.minified)} KB minified; largest packages, KB minified: ${signing.largest}`,
    }),
  ];
}
