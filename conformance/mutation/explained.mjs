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
};

const TRACE_ONLY = 'equivalent for every node: this handler runs only when execute() is given a trace hook (the generator\'s opcode census; no node path passes one), since Machine.run\'s untraced loop does the op itself and never falls back to it';
const FAST = 'equivalent: a fast path of Machine.run forced off (its guard made true): the op\'s handler runs instead and gives the same answer (each fast path does exactly what its handler does, for the cases it takes), only slower';
const EDGE_FAST = 'equivalent: moves the edge between a fast path and its handler by one value (at the edge both give the same answer)';
const NUMBER_PATH = 'equivalent: the number fast path of the storage codec forced off: the bigint path writes and reads the same bytes for every value the number path takes';
const BYTE_SHIFT = 'equivalent: an arithmetic instead of a logical shift whose result is stored in a byte (Uint8Array keeps the low 8 bits, which both shifts give alike)';
const DIRTY = 'equivalent for every node: the in-place update of a summary tree\'s levels after set(), which no node path calls (a summary is built in one go from a sorted list; root() then builds the levels once)';

const SERVED = 'not consensus: the evidence the node serves for a payload (peers\' GetPayloads, REST call proofs, and what its own deferred checks hand back to takeEvidence); whoever takes it checks every claim again (checkEvidence, then against its own headers: docs/STATE.md "Bitcoin evidence"), and no block\'s decision reads it';
const HEADER_TIP = 'not consensus: the header tip, which only says where the header follower syncs from, whether a peer\'s tip announcement is followed and what the status reports (header_height); blocks are applied from the stored headers the follower reads back and checks, never from the tip';
const INTAKE_RACE = 'not consensus: the record of reorganisations that intake\'s spend check reads when one happened between its look-up at the endpoint and the writer\'s acceptance (accept.ts droppedAt); it only decides whether such a call is stored dropped at once or left pending for the deferred check, which drops it at the same block; a history plays each arrival with no reorganisation in between';

/** The ledger's (src/writer/ledger): each checked against the code it names. */
const LEDGER_PATTERNS = [
  { file: 'src/writer/ledger/undo-log.ts', fn: 'UndoBatch.storageWrite', match: /this\.flushed|after the block was flushed/, reason: `${GUARD} (applyBlock's own order: every storage write comes from decideCall, before its one flushStorage call)` },
  { file: 'src/writer/ledger/undo-log.ts', fn: 'UndoBatch.flushStorage', match: /this\.flushed|flushed twice/, reason: `${GUARD} (applyBlock calls flushStorage once, after the block's last call; the flag feeds only the two guards)` },
  { file: 'src/writer/ledger/evidence.ts', fn: 'headersFrom', match: /count <= 0|count < 0|HEADERS_BY_KEY_MAX/, reason: 'equivalent: which of two reads of the same stored headers answers (one get per height up to 16, else one iterator; a count of 0 reads nothing either way): both give the headers of [from, from + count) up to the first missing one' },
  { file: 'src/writer/ledger/evidence.ts', fn: 'headersFrom', lines: [101, 101], match: /^literal:0 -> -1$/, reason: 'equivalent: count <= -1 instead of count <= 0: a count of 0 then takes the read by key of no height, which answers nothing as well' },
  { file: 'src/writer/ledger/evidence.ts', fn: 'headersFrom', lines: [106, 111], match: /^literal:0 -> -?1$|heightOf\(r\.key\) !== from \+ out\.length -> false|^statement:break;/, reason: 'not consensus: the answer for a range with a missing header, which the store never holds below its header tip (putHeaders writes runs that link to the header below, truncations remove from the top); every caller that needs the range refuses a short or broken answer (the follower: HeaderChainBroken, or it reads again; a peer checks the linkage of what GetHeaders serves)' },
  { file: 'src/writer/ledger/evidence.ts', fn: 'putHeaders', lines: [85, 87], match: /./, reason: HEADER_TIP },
  { file: 'src/writer/ledger/evidence.ts', fn: 'loadHeaderTip', match: /./, reason: `${HEADER_TIP} (loaded when the store opens)` },
  { file: 'src/writer/ledger/evidence.ts', fn: 'payloadEvidence', match: /./, reason: SERVED },
  { file: 'src/writer/ledger/evidence.ts', fn: 'standing', match: /./, reason: `${SERVED} (whether a stored claim still stands, so that what is served holds)` },
  { file: 'src/writer/ledger/evidence.ts', fn: 'journalEntry', match: /./, reason: `${SERVED} (the journal entries payloadEvidence reads, once per question)` },
  { file: 'src/writer/ledger/rewind.ts', fn: 'rewindTo', match: /chainEpoch|reorgForks|REORG_LOG/, reason: INTAKE_RACE },
  { file: 'src/writer/ledger/rewind.ts', fn: '(top level)', match: /^literal:64 -> 6[35]$/, reason: `${INTAKE_RACE} (REORG_LOG, how many of them are kept)` },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', match: /drops\.push\(\{ txid, outpoint, spender \}\)/, reason: 'not consensus: the list of the block\'s drops handed back to the follower, which keeps each spender\'s evidence for REST call proofs and peers (storeSpentBy); the drop itself, the call\'s status, is made by finishCall' },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', match: /l\.headerTip/, reason: HEADER_TIP },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', lines: [125, 125], match: /./, reason: 'not consensus: the block\'s decision leaves kept for REST\'s decision proofs; the decisions root is computed from the same leaves before this (decisionsRoot(batch.decisions)), and the vectors compare that root' },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', match: /^(boolean:true -> false|logical:opts\.sync \?\? true -> opts\.sync && true)$/, reason: 'not consensus: whether a block read in full is written with fsync; it changes what a crash of the machine keeps, never an answer (a restart is a clean stop)' },
];

/**
 * Survivors explained by a rule on their text: {file, fn?, lines?: [first, last], status?, match, reason}; `match`
 * is tested against "operator:original -> replacement". Each was checked against the code
 * it names.
 */
export const EXPLAINED_PATTERNS = [
  ...['const_', 'load', 'store', 'jmp', 'jmpf', 'lt', 'le', 'gt', 'ge', 'loop'].map((fn) => ({ file: 'src/vm/handlers.ts', fn, status: 'no coverage', match: /./, reason: TRACE_ONLY })),
  { file: 'src/vm/handlers.ts', fn: 'addU', status: 'no coverage', match: /./, reason: `${TRACE_ONLY} (its number branch: untraced, numbers whose sum fits reach the fast path first)` },
  { file: 'src/vm/handlers.ts', fn: 'subU', status: 'no coverage', match: /./, reason: `${TRACE_ONLY} (its number branch: untraced, numbers whose difference is not negative reach the fast path first)` },
  { file: 'src/vm/handlers.ts', fn: 'mulU', status: 'no coverage', match: /./, reason: `${TRACE_ONLY} (its number branch: untraced, numbers whose product fits reach the fast path first)` },
  { file: 'src/vm/execute.ts', fn: 'Machine.run', match: /^condition:.*typeof .* -> true$/, reason: FAST },
  { file: 'src/vm/execute.ts', fn: 'Machine.run', match: /^comparison:a \+ b > MAX_SAFE -> a \+ b >= MAX_SAFE$|^comparison:a \* b > MAX_SAFE -> a \* b >= MAX_SAFE$|^comparison:a - b < 0 -> a - b <= 0$/, reason: EDGE_FAST },
  { file: 'src/vm/execute.ts', fn: 'Machine.run', match: /^condition:trace === undefined -> true$/, reason: `${TRACE_ONLY} (forced true, the untraced loop runs always; the node never passes a hook, so it always did)` },
  { file: 'src/vm/execute.ts', fn: 'Machine.run', match: /^literal:0 -> 1$/, reason: `${EDGE_FAST} (a - b < 1: equal operands go to the handler, which answers 0 as the fast path would)` },
  { file: 'src/vm/execute.ts', fn: 'Machine.run', status: 'no coverage', match: /trace\(|this\.fProg\.length \+ 1|^literal:[01] -> -?[012]$/, reason: `${TRACE_ONLY} (the call of the trace hook)` },
  { file: 'packages/protocol/src/vm/values.ts', fn: 'encodeRt', match: /^condition:typeof x === 'number'( && x >= 0)? -> false$/, reason: NUMBER_PATH },
  { file: 'packages/protocol/src/vm/values.ts', fn: 'decodeRt', match: /^condition:hi < 0x200000 -> false$|^condition:\(b\[0\] \| .* -> false$/, reason: NUMBER_PATH },
  { file: 'packages/protocol/src/vm/values.ts', fn: 'decodeRt', match: /^comparison:hi < 0x200000 -> hi <= 0x200000$|^literal:0x200000 -> 2097151$|^comparison:b\[9\] < 0x20 -> b\[9\] <= 0x20$|^literal:0x20 -> 31$/, reason: `${NUMBER_PATH} (the edge between the two paths moved down by one, or up to a value both paths read alike)` },
  { file: 'packages/protocol/src/vm/values.ts', fn: 'encodeRt', match: /^bitwise:(hi|lo|w) >>> (8|16|24) -> \1 >> \2$/, reason: BYTE_SHIFT },
  { file: 'packages/protocol/src/vm/values.ts', fn: 'encodeRt', match: /^arithmetic:hi \* 4294967296 -> hi \/ 4294967296$/, reason: 'equivalent: lo = x - hi / 2^32 differs from x by less than half a unit in its last place for every x below 2^53 (hi < 2^21), so it rounds to x, and x\'s low 32 bits, which the next statement stores, are lo\'s' },
  { file: 'packages/protocol/src/stamp.ts', fn: '(top level)', match: /^literal:0x(53|56|43) -> \d+$/, reason: 'not consensus: STAMP_MAGIC is read only by the client\'s stamp builders (callStampScript, deployStampScript: out of scope); the node\'s reading (svcPush) compares the three bytes itself' },
  { file: 'packages/protocol/src/stamp.ts', fn: 'parseStampPush', match: /^condition:singleDirectPush\(script\) -> false$/, reason: 'equivalent: a fast path forced off: decompiling the script gives the same two chunks for a single direct push, and the same answer' },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', match: /prevTip|refuseWhileHalted/, reason: `${GUARD} (the writer's own order: the chain follower hands it each block on its tip, never one that does not link; NodeError internal)` },
  { file: 'src/writer/ledger/rewind.ts', match: /l\.anchor/, reason: `${GUARD} (a rewind never goes below the journal's anchor: the follower's fork height is above it; NodeError internal)` },
  { file: 'src/writer/ledger/evidence.ts', match: /!anchor|!raw|block journal entry/, reason: `${GUARD} (the journal's own invariants: headers after its anchor, an entry for every height it holds; NodeError internal)` },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', lines: [130, 146], match: /./, reason: 'not consensus: the REST indexes of a block (a contract\'s event pages, its calls per block, its call count), which GET /contracts/... read; the block\'s decisions root commits to the same events and outcomes, and the vectors compare that root' },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', match: /contractDrops/, reason: 'not consensus: the REST index of a contract\'s dropped calls; the drop itself is the call\'s status, which the vectors compare' },
  { file: 'src/writer/ledger/apply-block.ts', fn: 'applyBlock', match: /lastBlockAt/, reason: 'not consensus: the wall-clock time of the last block, for /status' },
  { file: 'src/state/merkle.ts', fn: 'SortedMerkleTree.ensureLevels', status: 'no coverage', match: /./, reason: DIRTY },
  ...LEDGER_PATTERNS,
];

