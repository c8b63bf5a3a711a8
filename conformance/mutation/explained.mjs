// Why each surviving mutant may stay (conformance/README.md, "The mutation run"). Keys: a
// mutant's own key "file:function:operator:original -> replacement" (as survivors.md
// prints it), or "file:function" for every survivor in a function, or "file" for a whole
// file. A reason starts with its kind:
//   "equivalent:"    no input can tell the mutant from the code (a memo, a redundant guard);
//   "not consensus:" what it changes is no rule (a message, a bound no block can reach);
//   "not yet:"       a rule no vector pins yet: a missing case, counted as unexplained.
const MEMO = 'equivalent: a memo of a pure function (what it answers is what computing would); its size, its clearing and whether an entry is reused change no answer';
const BUCKET = 'equivalent: the hash of an in-memory lookup index; every bucket is searched by comparing whole keys, so another hash only changes which bucket';
const GUARD = 'not consensus: a check of the caller\'s own arguments (a programming error of the node, never input from a block or a peer): every caller passes values of the checked shape';
const MESSAGE = 'not consensus: only the English message (the vectors\' `note`, never compared)';

export const EXPLAINED = {
  'packages/protocol/src/merkle-branch.ts:memoParent': MEMO,
  'packages/protocol/src/merkle-branch.ts:(top level):literal:1 -> 2': `${MEMO} (PARENT_MEMO_MAX = 1 << 14)`,
  'packages/protocol/src/merkle-branch.ts:(top level):literal:1 -> 0': `${MEMO} (PARENT_MEMO_MAX = 1 << 14)`,
  'packages/protocol/src/merkle-branch.ts:(top level):literal:14 -> 15': `${MEMO} (PARENT_MEMO_MAX = 1 << 14)`,
  'packages/protocol/src/merkle-branch.ts:(top level):literal:14 -> 13': `${MEMO} (PARENT_MEMO_MAX = 1 << 14)`,
  'packages/protocol/src/merkle-branch.ts:(top level):bitwise:1 << 14 -> 1 >> 14': `${MEMO} (PARENT_MEMO_MAX = 1 << 14)`,
  'packages/protocol/src/hash.ts:tagPrefix': MEMO,
  'packages/protocol/src/state/trie.ts:keyHash': BUCKET,
  'src/vm/execute.ts:Machine.slot:literal:0x811c9dc5 -> 2166136262': `${BUCKET} (the slot index's FNV-1a)`,
  'src/vm/execute.ts:Machine.slot:literal:0x811c9dc5 -> 2166136260': `${BUCKET} (the slot index's FNV-1a)`,
  'src/vm/execute.ts:Machine.slot:literal:0x01000193 -> 16777620': `${BUCKET} (the slot index's FNV-1a)`,
  'src/vm/execute.ts:Machine.slot:literal:0x01000193 -> 16777618': `${BUCKET} (the slot index's FNV-1a)`,
  'src/vm/execute.ts:Machine.slot:bitwise:h ^ suffix[j] -> h & suffix[j]': `${BUCKET} (the slot index's FNV-1a)`,
  'src/vm/execute.ts:Machine.slot:statement:h = Math.imul(h ^ suffix[j], 0x01000193); -> (removed)': `${BUCKET} (the slot index's FNV-1a)`,
  'src/vm/execute.ts:Machine.slot:statement:h = plen; -> (removed)': `${BUCKET} (scalars share one bucket)`,
  'src/vm/execute.ts:Machine.constructor': `${GUARD} (the execution context a block's transaction gives)`,
  'packages/protocol/src/vm/verifier.ts:VerifyError.constructor': MESSAGE,
  'packages/protocol/src/state/decisions.ts:encodeDecision': `${GUARD} (the encoder's check of the decision the ledger built; decision.leaf-decode pins the bytes)`,
  'packages/protocol/src/state/decisions.ts:stateRootOf': `${GUARD} (two 32-byte roots)`,
  'packages/protocol/src/state/trie.ts:trieNodeHash': `${GUARD} (two 32-byte hashes)`,
  'packages/protocol/src/envelope.ts:checkEnvelopeFields': `${GUARD}: every path to it (the JSON form, the Borsh bytes) has checked each field before; it guards envelopes built in code (the client)`,
  'packages/protocol/src/envelope.ts:checkBytes': `${GUARD}: called by checkEnvelopeFields only`,
  'packages/protocol/src/value.ts:valueProblem': `${GUARD}: values read from JSON or bytes are checked as they are read; it guards values built in code (the client, the VM's results)`,
  'packages/protocol/src/value.ts:valueFromJson:literal:40 -> 41': 'equivalent: a length cap before BigInt (bounds the work on hostile input); a canonical decimal of 40 or more digits is past 2^128-1 and refused by the range check with the same answer',
  'packages/protocol/src/value.ts:valueFromJson:literal:40 -> 39': 'equivalent: a length cap before BigInt; a canonical decimal of 40 digits is past 2^128-1 and refused by the range check with the same answer',
  'packages/protocol/src/value.ts:valueFromJson:comparison:json.length > 40 -> json.length >= 40': 'equivalent: a length cap before BigInt; a canonical decimal of 40 digits is past 2^128-1 and refused by the range check with the same answer',
  'packages/protocol/src/value.ts:valueFromJson:literal:21 -> 22': 'equivalent: a length cap before BigInt; a canonical i64 decimal has at most 20 characters, longer ones are out of range and refused with the same answer',
  'packages/protocol/src/value.ts:valueFromJson:literal:21 -> 20': 'equivalent: a length cap before BigInt; a canonical i64 decimal has at most 20 characters, longer ones are out of range and refused with the same answer',
  'packages/protocol/src/value.ts:valueFromJson:comparison:json.length > 21 -> json.length >= 21': 'equivalent: a length cap before BigInt; a canonical i64 decimal has at most 20 characters, longer ones are out of range and refused with the same answer',
  'src/writer/ledger/apply-block.ts': 'not yet: no vector operation drives the ledger; the scripted histories ("Ordering and status" under "Not covered yet") are its vectors',
  'src/writer/ledger/rewind.ts': 'not yet: no vector operation drives the ledger; reorgs are part of the scripted histories ("Not covered yet")',
  'src/writer/ledger/undo-log.ts': 'not yet: no vector operation drives the ledger; reorgs are part of the scripted histories ("Not covered yet")',
  'src/writer/ledger/evidence.ts': 'not yet: no vector operation drives the ledger\'s evidence bookkeeping (claims, headers per block); the scripted histories will',
};
