// What the mutation run mutates (conformance/README.md, "The mutation run"): the compiled consensus
// modules, and what it leaves out on purpose, each with its reason. Paths are the
// TypeScript sources; the run mutates their compiled files: dist/ for src/, and
// packages/protocol/dist/ for the workspace package @svc-node/protocol.

/** Folders whose every file is mutated (not their subfolders), but for the files and functions excluded below. */
export const FOLDERS = ['packages/protocol/src', 'packages/protocol/src/vm', 'packages/protocol/src/state', 'src/vm', 'src/state'];

/** The ledger's application, reorg and evidence code in the writer. */
export const FILES = [
  'src/writer/ledger/apply-block.ts',
  'src/writer/ledger/rewind.ts',
  'src/writer/ledger/undo-log.ts',
  'src/writer/ledger/evidence.ts',
];

/** Whole files left out: not consensus, or the harness's own. */
export const EXCLUDED_FILES = {
  'packages/protocol/src/index.ts': 're-exports only',
  'packages/protocol/src/coin.ts': 'node policy: the coin evidence a node asks for a payload whose anchor is unconfirmed; never what a block decides (conformance/README.md, "Not covered yet")',
  'packages/protocol/src/cursor.ts': 'REST and feed paging cursors: positions a client hands back, not consensus',
  'packages/protocol/src/feed.ts': 'the live feed\'s message shapes: not consensus',
  'packages/protocol/src/fields.ts': 'the REST, stream, gossip and chain-data boundaries\' checks of a 32-byte field\'s shape (hex or bytes), refused bad_request before anything else reads the request: input validation of the transports, no rule a block is decided by',
  'packages/protocol/src/fingerprint.ts': 'REST cache fingerprints (ETags): not consensus',
  'src/vm/disasm.ts': 'the disassembler, for people reading bytecode: nothing executes or verifies through it',
  'src/vm/mem-host.ts': 'the in-memory storage host the adapter runs execution cases on: the harness, not the node (the node\'s host is the writer\'s store)',
};

/**
 * Functions left out inside mutated files ("file:function"; a class method is
 * "Class.method"): I/O, logging and forms that no block decides.
 */
export const EXCLUDED_FUNCTIONS = {
  'packages/protocol/src/bitcoin.ts:difficultyOfBits': 'a block\'s difficulty as a float, for the devnet chain\'s Esplora JSON; no rule reads it',
  'packages/protocol/src/bitcoin.ts:parseTxHex': 'reads the chain-data endpoint\'s transaction hex (I/O); the rules on the transaction are binding.* and evidence.*',
  'packages/protocol/src/envelope.ts:encodePayload': 'base64 transport of a payload on REST and gossip, not what a rule hashes',
  'packages/protocol/src/envelope.ts:decodePayload': 'base64 transport of a payload on REST and gossip, not what a rule hashes',
  'packages/protocol/src/envelope.ts:envelopesEqual': 'intake: whether a payload offered again is the one held (node policy)',
  'packages/protocol/src/envelope.ts:signEnvelope': 'the caller\'s signer (the client\'s side); verification is pinned by codec.envelope-decode',
  'packages/protocol/src/evidence.ts:encodeEvidence': 'the binary storage form of evidence: the store\'s, not the wire\'s (conformance/README.md, "Not covered yet")',
  'packages/protocol/src/evidence.ts:decodeEvidence': 'the binary storage form of evidence: the store\'s, not the wire\'s',
  'packages/protocol/src/evidence.ts:EvidenceReader': 'the binary storage form of evidence: the store\'s, not the wire\'s',
  'packages/protocol/src/evidence.ts:inclusionBytes': 'the binary storage form of evidence: the store\'s, not the wire\'s',
  'packages/protocol/src/evidence.ts:writeInclusion': 'the binary storage form of evidence: the store\'s, not the wire\'s',
  'packages/protocol/src/evidence.ts:checkTxBytes': 'the binary storage form of evidence: the store\'s, not the wire\'s',
  'packages/protocol/src/evidence.ts:inclusionJson': 'the JSON call proof REST serves to clients; no block\'s answer depends on it',
  'packages/protocol/src/evidence.ts:callProofJson': 'the JSON call proof REST serves to clients; no block\'s answer depends on it',
  'packages/protocol/src/evidence.ts:inclusionFromMerkleProof': 'reads the chain-data endpoint\'s merkle proof (I/O), as parseTxHex its transactions; what a block decides on the inclusion is foldInclusion\'s and inclusionMatchesHeader\'s',
  'packages/protocol/src/evidence.ts:decodeInclusion': 'an inclusion as senders write it (the peer proto, a REST coin, a call proof) read into the node\'s type; what a block decides on it is checkEvidence\'s (inclusionShapeError, foldInclusion), which checks the shape again',
  'packages/protocol/src/evidence.ts:parseCallProof': 'the client\'s reading of a REST call proof (src/client/node.ts); no block\'s answer depends on it',
  'packages/protocol/src/stamp.ts:callStampScript': 'the client\'s builder of a stamp output; the node\'s reading of stamps is binding.stamp',
  'packages/protocol/src/stamp.ts:deployStampScript': 'the client\'s builder of a stamp output; the node\'s reading of stamps is binding.stamp',
  'packages/protocol/src/schnorr.ts:verifySchnorrNoble': 'the pure-JavaScript BIP-340 reference the differential tests compare with (test/protocol/envelope.test.ts, vectors.test.ts); the node verifies with verifySchnorrFast, which codec.envelope-decode\'s signature_valid and peer.* pin',
  'packages/protocol/src/envelope.ts:tryOpenEnvelope': 'openEnvelope as a tagged result for a worker: only the tests call it (the pool calls openEnvelope)',
  'packages/protocol/src/schnorr.ts:signSchnorr': 'the signer\'s side (SDK, CLI, the generator\'s keys): a node only verifies',
  'packages/protocol/src/schnorr.ts:xOnlyPublicKey': 'the signer\'s side: a public key from a secret (SDK, CLI, signEnvelope); a node only verifies',
  'packages/protocol/src/schnorr.ts:isValidSecretKey': 'the signer\'s side: a check of a secret key (SDK); no node path calls it',
  'packages/protocol/src/schnorr.ts:isValidXOnlyKey': 'an SDK helper: no node path calls it (a caller key that is not on the curve fails verifySchnorrFast, pinned by codec.envelope-decode)',
  'packages/protocol/src/errors.ts:describeError': 'one line for an operator\'s log about a failure that stops a process (startup, a database that cannot be opened): no answer of the node carries it',
  'packages/protocol/src/value.ts:valueToPathArg': 'a map key written in a REST path (the client\'s side of valueFromPathArg): the REST API\'s, not a rule',
  'packages/protocol/src/value.ts:valuesEqual': 'equality of two values for intake\'s repeat check (envelopesEqual, node policy) and the CLI\'s contract tests; no rule reads it',
  'packages/protocol/src/contract.ts:registrationBody': 'the compiler\'s estimate of a deploy registration\'s size (deployableBodyBytes): the client\'s side',
  'packages/protocol/src/contract.ts:deployableBodyBytes': 'the compiler\'s estimate of a deploy registration\'s size, with room for its anchoring transaction: the client\'s side',
  'packages/protocol/src/evidence.ts:stripWitness': 'a transaction without its witness, for a sender of evidence: no node path calls it (the node reads stripped and whole transactions alike, pinned by evidence.proven-tx and evidence.check)',
  'packages/protocol/src/evidence.ts:settlesAt': 'when the node schedules a payload\'s deferred check (src/core/core.ts) and REST\'s settles_at: the block a payload settles in is decided by that block\'s application, which history.run pins',
  'packages/protocol/src/headers.ts:hashMeetsTarget': 'the devnet chain\'s miner (no network limit); header runs are checked by checkProofOfWork against the network\'s powLimit (headers.run)',
  'packages/protocol/src/binding.ts:assertCallBinding': 'checkCallBinding as a throw: no node path calls it (intake and block application call checkCallBinding and checkCallBindingWithStamp, pinned by binding.call and history.run)',
  'packages/protocol/src/value.ts:valueFromPathArg': 'a map key written in a REST path: the REST API\'s, not a rule',
  'src/state/merkle.ts:SortedMerkleTree.set': 'incremental updates of a summary tree: no node path calls it (a summary is built in one go from a sorted list, docs/STATE.md "Contract summaries")',
  'src/state/merkle.ts:SortedMerkleTree.get': 'a lookup in a summary tree: no node path calls it (summaries are only built and asked for their root)',
  'src/state/merkle.ts:SortedMerkleTree.find': 'the lookup behind set and get, which no node path calls',
  'src/state/merkle.ts:SortedMerkleTree.entries': 'iterates a summary tree: no node path calls it (REST and gossip page entries from the store)',
  'src/state/merkle.ts:SortedMerkleTree.prove': 'membership proofs of a contract summary: gossip sync between nodes, verified by the asker; roots.summary pins the root they compare',
  'src/state/merkle.ts:SortedMerkleTree.path': 'membership proofs of a contract summary (gossip sync)',
  'src/state/merkle.ts:verifyMembership': 'membership proofs of a contract summary (gossip sync)',
  'src/state/merkle.ts:expectedSides': 'membership proofs of a contract summary (gossip sync)',
  'src/state/merkle.ts:rootFromPath': 'membership proofs of a contract summary (gossip sync)',
  'packages/protocol/src/state/trie.ts:MerkleTrie.prove': 'the proofs REST serves; their verification is pinned by roots.trie-proof',
  'packages/protocol/src/state/state-tree.ts:verifyFieldProof': 'the client\'s check of a REST field proof (src/client/node.ts)',
  'packages/protocol/src/vm/storage-layout.ts:fieldEntry': 'the REST and client mirror of the VM\'s storage layout (field reads); the VM\'s own keys and bytes are pinned by execution.call writes',
  'packages/protocol/src/vm/storage-layout.ts:fieldKey': 'the REST and client mirror of the VM\'s storage layout',
  'packages/protocol/src/vm/storage-layout.ts:encodeStorageValue': 'the REST and client mirror of the VM\'s storage layout',
  'packages/protocol/src/vm/storage-layout.ts:decodeStorageValue': 'the REST and client mirror of the VM\'s storage layout',
  'packages/protocol/src/vm/storage-layout.ts:defaultValue': 'the REST and client mirror of the VM\'s storage layout',
  'packages/protocol/src/vm/storage-layout.ts:isDefaultValue': 'the REST and client mirror of the VM\'s storage layout',
};

/**
 * Files holding a memo of a pure function in module state: a mutant on the path that fills
 * it is hidden by entries cached before it was switched on, so the run tries each of their
 * survivors again in a fresh process with the mutant active from the start.
 */
export const FRESH_PROCESS_FILES = {
  'packages/protocol/src/hash.ts': 'tagPrefixCache: the tag prefixes of tagged hashes',
  'packages/protocol/src/merkle-branch.ts': 'parentMemo: inner nodes of Bitcoin merkle trees already hashed',
};
