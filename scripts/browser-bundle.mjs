// The SDK's browser bundles (docs/CLI.md, "The SDK in a browser"): esbuild over
// packages/client/src/browser.ts and browser-sign.ts, ESM, minified. What differs from Node:
// - a module `x.ts` with a sibling `x.browser.ts` is replaced by that sibling (the feed's
//   socket: the page's WebSocket instead of the `ws` package);
// - node:crypto is packages/client/src/browser/node-crypto.ts (SHA-256 by @noble/hashes, random
//   bytes from Web Crypto);
// - tiny-secp256k1 (WebAssembly, loaded the Node way) is @bitcoinerlab/secp256k1, the
//   same interface over @noble/curves, pure JavaScript;
// - `Buffer`, which the protocol code names without importing, is the `buffer` package.
// `npm run bundle:browser` writes dist/browser/svc-read.js and svc-read-sign.js, each with
// its metafile (for esbuild's analyser); test/client/browser.test.ts and bench/browser.bench.ts build
// through browserBuildOptions, so what they test and measure is this bundle.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The two bundles `npm run bundle:browser` writes, each a module of re-exports (esbuild's
 * stdin): reading (REST, proofs, the feed) alone, and reading with signing (envelopes,
 * anchoring transactions). bench/browser.bench.ts measures these same two.
 */
export const browserBundles = {
  'svc-read': "export * from './packages/client/src/browser.ts';",
  'svc-read-sign': "export * from './packages/client/src/browser.ts'; export * from './packages/client/src/browser-sign.ts';",
};

const SIDE_EFFECT_FREE = Symbol('bitcoinjs-lib module');

const browserPaths = {
  name: 'svc-browser-paths',
  setup(build) {
    build.onResolve({ filter: /^node:crypto$/ }, () => ({ path: join(repoRoot, 'packages', 'client', 'src', 'browser', 'node-crypto.ts') }));
    // The package's own ES module (its `main` is a CommonJS build, which would take all of
    // @noble/curves' secp256k1 module, FROST and hash-to-curve included, untouched by tree shaking).
    build.onResolve({ filter: /^tiny-secp256k1$/ }, (args) => build.resolve('@bitcoinerlab/secp256k1/index.js', { kind: args.kind, resolveDir: repoRoot }));
    // bitcoinjs-lib's ES modules declare only functions, classes and constants, but its
    // package.json does not say so (no "sideEffects": false), so every module its index
    // re-exports would stay: PSBT with bip174 and valibot, the payments, the block parser.
    const bitcoinjsDir = join(repoRoot, 'node_modules', 'bitcoinjs-lib') + '/';
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === SIDE_EFFECT_FREE) return undefined;
      if (args.path !== 'bitcoinjs-lib' && !(args.importer.startsWith(bitcoinjsDir) && args.path.startsWith('.'))) return undefined;
      const r = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: SIDE_EFFECT_FREE });
      return r.errors.length > 0 ? r : { path: r.path, sideEffects: false };
    });
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      const sibling = resolve(args.resolveDir, args.path.replace(/\.js$/, '.browser.ts'));
      return existsSync(sibling) ? { path: sibling } : undefined;
    });
  },
};

/**
 * esbuild options for a browser bundle of `stdin` (`{contents}`: a module importing the
 * SDK's browser entries by paths relative to the repository), written nowhere unless
 * `outfile` is given.
 */
export function browserBuildOptions({ stdin, outfile, minify = true }) {
  return {
    stdin: { resolveDir: repoRoot, loader: 'ts', sourcefile: 'bundle.ts', ...stdin },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify,
    metafile: true,
    legalComments: 'none',
    inject: [join(repoRoot, 'packages', 'client', 'src', 'browser', 'buffer-global.ts')],
    plugins: [browserPaths],
    logLevel: 'error',
    ...(outfile ? { outfile } : { write: false }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const esbuild = await import('esbuild');
  const outdir = join(repoRoot, 'dist', 'browser');
  mkdirSync(outdir, { recursive: true });
  for (const [name, contents] of Object.entries(browserBundles)) {
    const outfile = join(outdir, `${name}.js`);
    const r = await esbuild.build(browserBuildOptions({ stdin: { contents }, outfile }));
    writeFileSync(join(outdir, `${name}.meta.json`), JSON.stringify(r.metafile));
    console.log(`${outfile}: ${r.metafile.outputs[Object.keys(r.metafile.outputs)[0]].bytes} bytes`);
  }
}
