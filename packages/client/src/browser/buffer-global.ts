/**
 * The `Buffer` the protocol code names without importing it, in the browser bundle
 * (esbuild's inject: scripts/browser-bundle.mjs): the `buffer` package, Node's Buffer API
 * over Uint8Array.
 */
export { Buffer } from 'buffer';
