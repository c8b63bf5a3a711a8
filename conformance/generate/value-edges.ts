/**
 * Strings at the edges of UTF-16 surrogates: a string value has a UTF-8 form exactly when
 * every high surrogate (U+D800..U+DBFF) is followed by a low one (U+DC00..U+DFFF) and no
 * low one stands alone. In the vectors' JSON a lone surrogate is a \u escape.
 */
import type { CaseInput } from './kit.js';

export function stringEdgeCases(): CaseInput[] {
  const rows: [string, string, string][] = [
    ['string-below-surrogates', '\ud7ff', 'U+D7FF, the last code point below the surrogates, is a string'],
    ['string-above-surrogates', '\ue000', 'U+E000, the first code point above the surrogates, is a string'],
    ['string-lowest-pair', '\ud800\udc00', 'the lowest surrogate pair (U+10000) is a string'],
    ['string-highest-pair', '\udbff\udfff', 'the highest surrogate pair (U+10FFFF) is a string'],
    ['string-lone-low-first', '\udc00', 'a lone low surrogate U+DC00 is refused'],
    ['string-lone-low-last', '\udfff', 'a lone low surrogate U+DFFF is refused'],
    ['string-lone-high-last', 'a\udbff', 'a high surrogate U+DBFF at the end is refused'],
    ['string-high-then-high', '\ud800\udbff', 'a high surrogate followed by another high one is refused'],
    ['string-high-then-above', '\udbff\ue000', 'a high surrogate followed by U+E000 is refused'],
  ];
  return rows.map(([id, value, pins]) => ({ id, pins, input: { type: 'string', value } }));
}
