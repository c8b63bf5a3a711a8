/**
 * RFC 8785 JSON canonicalization (JCS), the one import of the `canonicalize` package: what
 * code hashes, registration hashes and the registration bytes nodes send are made of.
 */
import canonicalizeModule from 'canonicalize';

// canonicalize is CommonJS (module.exports = fn) while its .d.ts declares an ES default
// export; under NodeNext the default import is module.exports itself at runtime.
/** JCS of `input`; undefined for what JSON cannot hold (undefined, a function). */
export const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;
