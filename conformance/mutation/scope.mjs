// What the mutation run mutates (conformance/mutation/README.md): the compiled consensus
// modules, and what it leaves out on purpose, each with its reason. Paths are the
// TypeScript sources; the run mutates their compiled dist/ files.

/** Folders whose every file is mutated, but for the files and functions excluded below. */
export const FOLDERS = ['src/protocol', 'src/vm', 'src/state'];

/** The ledger's application, reorg and evidence code in the writer. */
export const FILES = [
  'src/writer/ledger/apply-block.ts',
  'src/writer/ledger/rewind.ts',
  'src/writer/ledger/undo-log.ts',
  'src/writer/ledger/evidence.ts',
];

/** Whole files left out: not consensus, or the harness's own. */
export const EXCLUDED_FILES = {
  'src/protocol/index.ts': 're-exports only',
  'src/protocol/coin.ts': 'node policy: the coin evidence a node asks for a payload whose anchor is unconfirmed; never what a block decides (conformance/README.md, "Not covered yet")',
  'src/protocol/cursor.ts': 'REST and feed paging cursors: positions a client hands back, not consensus',
  'src/protocol/feed.ts': 'the live feed\'s message shapes: not consensus',
  'src/protocol/fingerprint.ts': 'REST cache fingerprints (ETags): not consensus',
  'src/vm/disasm.ts': 'the disassembler, for people reading bytecode: nothing executes or verifies through it',
  'src/vm/mem-host.ts': 'the in-memory storage host the adapter runs execution cases on: the harness, not the node (the node\'s host is the writer\'s store)',
};

/**
 * Functions left out inside mutated files ("file:function"; a class method is
 * "Class.method"): I/O, logging and forms that no block decides.
 */
export const EXCLUDED_FUNCTIONS = {};
