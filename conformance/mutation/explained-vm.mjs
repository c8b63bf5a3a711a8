// Why each surviving mutant of the VM, its verifier and the state trees may stay (the
// format of explained.mjs, which spreads these in). Each reason was checked against the code
// it names; a survivor whose rule a case could pin has a case instead (generate/vm-kills.ts).
const V = 'packages/protocol/src/vm/verifier.ts';
const SAME_OFFSET = 'equivalent: the next check refuses every artifact this one does, at the same offset (the refusal\'s reason, a note, is all that differs)';
const UNDEFINED_EDGE = 'equivalent: the one extra step compares or reads past the end of an array, where both sides are undefined (equal) or the value is refused as before';

export const EXPLAINED_VM = {
  [`${V}:exactKeys:method:keys.every -> keys.some`]: 'equivalent: every key exactKeys demands is read and checked right after it (readonly a boolean, inputs an array, key null or a type, value and type known, name an identifier), so an entry missing one of them is refused at -1 all the same',
  [`${V}:parseConstants:statement:fail(-1, \`\${what}: bad integer\`); -> (removed)`]: 'equivalent: x stays undefined, inRange(t, undefined) is false, and the range check refuses the constant at -1',
  [`${V}:verifyArtifact:condition:e instanceof VerifyError -> true`]: 'equivalent: verify() throws nothing but its own refusals (VerifyError): every value it reads from the artifact is checked for its type before use, so no artifact reaches another throw; the rethrow guards the verifier\'s own bugs',
  [`${V}:verifyArtifact:statement:throw e; -> (removed)`]: 'equivalent: verify() throws nothing but its own refusals (VerifyError), see the condition above; no artifact reaches this line',
  [`${V}:verify:literal:5 -> 4`]: 'equivalent: a FUNC header with four bytes left passes this test, then its length 5 + nparams is past the code and the same offset is refused as a truncated FUNC instruction',
  [`${V}:verify:literal:24 -> 23`]: 'equivalent: a u32 operand whose top byte is not zero is at least 2^23 either way, past every jump or call target (code is at most 65,536 bytes) and every loop bound (at most 100,000): refused at the same instruction',
  [`${V}:verify:bitwise:(code[p] | (code[p + 1] << 8) | (code[p + 2] << 16) | (code[p + 3] << 24)) >>> 0 -> (code[p] | (code[p + 1] << 8) | (code[p + 2] << 16) | (code[p + 3] << 24)) >> 0`]: 'equivalent: the operand is stored in an Int32Array (A, B, C), which keeps the same 32 bits whether the value was read signed or unsigned',
  [`${V}:verify:literal:1 -> 2`]: 'equivalent: isStart\'s length (n + 1 or n + 2) and its marks (1 or 2, only tested for truth) change nothing: it is read only at a target or offset already checked to be below n; funcAt filled with -1 or -2 is only tested < 0',
  [`${V}:verify:literal:1 -> 0`]: 'equivalent: isStart of length n instead of n + 1: it is read only at a target or offset already checked to be below n, and every instruction start is below n',
  [`${V}:verify:literal:0 -> -1`]: 'equivalent: an operand an opcode does not have (A, B, C default) is never read, by the verifier or the VM; and a function offset of -1 passes the test off < -1 and is refused by the next (not a FUNC start) at offset -1, its own value: the same answer',
  [`${V}:verify:literal:0 -> 1`]: 'equivalent: an operand an opcode does not have (A, B, C default) is never read, by the verifier or the VM',
  [`${V}:verify.verifyFunction:comparison:t >= n -> t > n`]: 'equivalent: isStart[n] is 0 (no instruction starts at the code\'s end), so a target equal to the code length is refused by the second test at the same instruction',
  [`${V}:verify.verifyFunction:comparison:t <= pc -> t < pc`]: 'equivalent: a JMP or JMPF to itself is then merged at an instruction already passed, whose state is never taken: refused as a jump into a dead end at its target, its own offset',
  [`${V}:verify.verifyFunction:condition:op === OP.FUNC -> false`]: 'equivalent: every FUNC header is a function start (function_offsets lists exactly the headers, and a function ends at the next one), so no function body holds one',
  [`${V}:verify.verifyFunction:statement:fail(pc, 'FUNC header inside a function'); -> (removed)`]: 'equivalent: every FUNC header is a function start, so no function body holds one; no artifact reaches this line',
  [`${V}:verify.verifyFunction:comparison:s < lp.end -> s <= lp.end`]: 'equivalent: lp.end is the LOOP instruction itself, never a STORE',
  [`${V}:verify.verifyFunction:comparison:open[open.length - 1].end < lp.end -> open[open.length - 1].end <= lp.end`]: 'equivalent: two loops never end at one offset (each ends at its own LOOP instruction)',
  [`${V}:verify.verifyFunction:literal:0 -> -1`]: 'equivalent: every function runs at least its RET, after which the stack height (0 or more) exceeds -1 and sets maxStack; below, cur.locals[a] past the count is undefined and refused by the next test at the same instruction',
  [`${V}:verify.verifyFunction.merge:comparison:i < s.stack.length -> i <= s.stack.length`]: UNDEFINED_EDGE,
  [`${V}:verify.verifyFunction.merge:comparison:i < s.locals.length -> i <= s.locals.length`]: UNDEFINED_EDGE,
  [`${V}:verify.verifyFunction:comparison:i < head.locals.length -> i <= head.locals.length`]: UNDEFINED_EDGE,
  [`${V}:verify.verifyFunction:comparison:pc < end -> pc <= end`]: 'equivalent: at pc = end the state is either gone (the last instruction ended the path: nothing runs) or still live, and then the instruction there (the next FUNC header, or none at the code\'s end) is refused at end, the offset "falls off the end" names',
  [`${V}:verify.verifyFunction:condition:loopTargets.has(pc) -> true`]: 'equivalent: loopHeads is read only at a LOOP\'s own target; storing the state at other instructions too changes nothing',
  [`${V}:verify.verifyFunction:comparison:a >= consts.length -> a > consts.length`]: 'equivalent: constTypes[consts.length] is undefined, not a string: refused by the second test at the same instruction',
  [`${V}:verify.verifyFunction:comparison:a >= f.nlocals -> a > f.nlocals`]: SAME_OFFSET + ' (LOOP: cur.locals[nlocals] is undefined, not u64)',
  [`${V}:verify.verifyFunction:condition:a >= f.nlocals -> false`]: SAME_OFFSET + ' (LOOP: cur.locals past the count is undefined, not u64)',
  [`${V}:verify.verifyFunction:statement:fail(pc, 'local index out of range'); -> (removed)`]: SAME_OFFSET + ' (LOOP: cur.locals past the count is undefined, not u64)',
  [`${V}:verify.verifyFunction:statement:break; -> (removed)`]: 'equivalent: EQ/NE falling through into NOT pops the bool it just pushed and pushes a bool again',
  [`${V}:verify.verifyFunction:logical:op >= OP.ADD_U64 && op <= OP.MOD_U128 -> op >= OP.ADD_U64 || op <= OP.MOD_U128`]: 'equivalent: only the arithmetic opcodes reach the default branch (every other opcode of the instruction set has its own case, and FUNC never occurs in a body)',
  [`${V}:verify.verifyFunction:condition:op >= OP.ADD_U64 && op <= OP.MOD_U128 -> true`]: 'equivalent: only the arithmetic opcodes reach the default branch (every other opcode of the instruction set has its own case, and FUNC never occurs in a body)',
  [`${V}:verify.verifyFunction:statement:fail(pc, \`opcode \${OPINFO[op]?.name ?? op} not allowed here\`); -> (removed)`]: 'equivalent: only the arithmetic opcodes reach the default branch; no artifact reaches this line',
  [`${V}:verify.verifyFunction:comparison:st.length > maxStack -> st.length >= maxStack`]: 'equivalent: the maximum is the same',
  [`${V}:verify.verifyFunction:statement:fail(t, 'jump into dead end'); -> (removed)`]: 'equivalent: jumps go forward (t > pc) to an instruction start inside their function (t < end), so the pass visits every merged target later and takes its state; no artifact reaches this line',
  [`${V}:verify.visit:condition:color[j] === 0 -> true`]: 'equivalent: walking again from a finished function meets only finished functions (no cycle through them, or the first walk refused it): more work, no other answer',
  [`${V}:verify:comparison:abiFn !== undefined -> abiFn === undefined`]: 'not consensus: FunctionInfo.public is read only by the disassembler (src/vm/disasm.ts); calls find functions through byName, which holds the ABI\'s functions alone',
  [`${V}:parseConstants:comparison:cs.length > MAX_CONSTS -> cs.length >= MAX_CONSTS`]: 'not yet: an artifact of exactly 65,535 constants (accepted) would pin it; its vector would be about 4 MB of JSON, left out for size',
  [`${V}:verify.visit:literal:2 -> 3`]: 'equivalent: a finished function is only tested for being 0 (unvisited) or 1 (on the path); 3 is neither, as 2',
  [`${V}:verify:comparison:i < functions.length -> i <= functions.length`]: 'equivalent: color[functions.length] is undefined, not 0: the extra step visits nothing',
  [`${V}:verify:condition:color[i] === 0 -> true`]: 'equivalent: walking again from a finished function meets only finished functions (no cycle through them, or the first walk refused it)',
};

const X = 'src/vm/execute.ts';
const H = 'src/vm/handlers.ts';
const VAL = 'packages/protocol/src/vm/values.ts';
const T = 'packages/protocol/src/state/trie.ts';
const ST = 'packages/protocol/src/state/state-tree.ts';
const D = 'packages/protocol/src/state/decisions.ts';
const SLOT_INDEX = 'equivalent: the slot index (LINEAR_SLOTS, cs.index, the hash filter) is a faster lookup of the same slots, each found by comparing its whole key; using it earlier, later or never, or rebuilding it, finds the same slot';
const WRITE_ORDER = 'not consensus: the order of the write set, a set of distinct (contract, key) entries: the vectors compare it sorted and the node applies each entry to its own key, so no root changes; a storage_limit_exceeded halt names the first contract of that order in its message only';
const EXACT_PATH = 'equivalent: a number fast path of an integer handler forced off, or its edge moved: the exact bigint path (checkedArith, norm) gives the same value for every operand the number path takes';
const NON_CANONICAL = 'not consensus: committed storage is only ever written by the VM\'s own encodeRt (8 bytes for u64/i64, 16 for u128, 1 byte 0/1 for bool, 32 for a key), so the node never reads a non-canonical value; one would be a node bug (execute throws, not a result)';
const UNZEROED = 'not yet: the byte is always 0 for an integer below 2^53 (hi < 2^21), and Buffer.allocUnsafeSlow hands out fresh memory that is zero in practice, so no vector can see the write removed; a zeroed Buffer.alloc would make this equivalent by construction';
const CANONICAL_LEAF = 'equivalent: decodeDecision accepts a leaf only if encodeDecision of what it read gives back the same bytes, and Buffer\'s reads throw past the end: a truncation check removed or moved refuses the same leaves (every refusal is the same answer, ok: false)';

export const EXPLAINED_VM_PATTERNS = [
  { file: X, fn: '(top level)', match: /^literal:16 -> 1[57]$/, reason: SLOT_INDEX },
  { file: X, fn: 'Machine.slot', match: /cs\.index === null -> true|x\.h !== h -> false|^statement:break; -> \(removed\)$|cs\.index !== null -> false|cs\.slots\.length > LINEAR_SLOTS|suffix !== null -> false/, reason: SLOT_INDEX },
  { file: X, fn: 'Machine.slot', lines: [152, 152], match: /j < suffix\.length/, reason: `${SLOT_INDEX} (the FNV-1a hash of the index)` },
  { file: X, fn: 'Machine.slot', lines: [159, 159], match: /^statement:continue; -> \(removed\)$/, reason: SLOT_INDEX },
  { file: X, fn: 'Machine.slot', lines: [163, 163], match: /^comparison:j < suffix\.length -> j <= suffix\.length$/, reason: 'equivalent: the keys compared have the same length here; the extra step compares undefined with undefined' },
  { file: X, fn: 'Machine.slot', match: /^comparison:suffix === null -> suffix !== null$/, reason: 'equivalent: `shared` only decides whether finish() copies a scalar\'s key bytes before handing them out; the copy holds the same bytes' },
  { file: X, fn: 'Machine.slot', match: /val === undefined|non-canonical/, reason: NON_CANONICAL },
  { file: X, fn: 'Machine.cstate', match: /list\.length <= 8 -> true|^literal:8 -> 9$|list\.length === 9 -> true|list\.length > 9 -> list\.length >= 9/, reason: 'equivalent: the state index (stateIndex) is a faster lookup of the same contract states by id; searching the list longer, rebuilding the index or adding a state to it twice finds the same state' },
  { file: X, fn: 'Machine.cstate', lines: [141, 141], match: /^literal:9 -> 8$/, reason: 'equivalent: the state index (stateIndex) is a faster lookup of the same contract states by id; adding the 9th state to it twice changes nothing' },
  { file: X, fn: 'compareBytes', match: /./, reason: WRITE_ORDER },
  { file: X, fn: 'Machine.finish', match: /stateList\.length === 1|^literal:1 -> [02]$/, reason: WRITE_ORDER },
  { file: X, fn: 'Machine.finish', match: /s\.type === TY\.(bytes|key)|^condition:s\.shared -> (true|false)$/, reason: 'equivalent: whether finish() copies a written key or value into a Buffer of its own: the copy holds the same bytes' },
  { file: X, fn: 'Machine.finish', match: /^boolean:false -> true$/, reason: 'equivalent: the storage check also runs for a contract the call did not write; its committed storage is within the limit (every call that would leave more is refused), so it passes' },
  { file: X, fn: 'Machine.finish', match: /retType === TY\.none \|\| result === undefined -> .* && /, reason: 'equivalent: RET leaves a result exactly when the function returns a type (the verifier proves one value on the stack), so the two conditions are always equal' },
  { file: X, fn: 'Machine', match: /^literal:0 -> -?1$/, reason: 'equivalent: the initial pc, sp and base fields are overwritten by run() before any handler reads them' },
  { file: X, fn: 'Machine.run', match: /^statement:this\.base = base; -> \(removed\)$/, reason: 'equivalent: the loop never changes base itself (only handlers do, through m.base, which the loop reads back), so m.base already holds it' },
  { file: X, fn: 'Machine.run', match: /^condition:this\.prog !== prog -> true$/, reason: 'equivalent: reloading the program\'s arrays after every handler reloads the same ones' },
  { file: X, fn: 'execute', match: /e instanceof Halt -> true|^statement:throw e; -> \(removed\)$/, reason: 'not consensus: execute throws only Halts for a verified program, a well-formed context and canonical committed storage (anything else is a node bug, which this rethrows)' },
  { file: H, fn: '(top level)', match: /^literal:0 -> -?1$/, reason: 'equivalent: the value stack\'s initial contents are never read (the verifier proves every slot is written by the call before it is read)' },
  { file: H, fn: '(top level)', match: /^literal:256 -> 25[57]$/, reason: 'equivalent: HANDLERS has an entry for every opcode byte the verifier accepts (all below 0x70); a table of 255 or 257 entries holds them all' },
  { file: H, fn: 'negI', match: /^condition:typeof a === 'number' -> false$/, reason: 'equivalent: checkedNeg of a number gives the same value as 0 - a, which norm() keeps a number' },
  ...['addU', 'subU', 'mulU', 'divU', 'modU', 'divModI', 'addSubMulI'].map((fn) => ({ file: H, fn, match: /typeof a === 'number' && typeof b === 'number'( && b !== 0)? -> false|r <= MAX_SAFE -> (r < MAX_SAFE|false)|r >= 0 -> (r > 0|false)|^literal:0 -> 1$|-MAX_SAFE -> MAX_SAFE|r >= -MAX_SAFE -> r > -MAX_SAFE|r <= MAX_SAFE && r >= -MAX_SAFE -> false/, reason: EXACT_PATH })),
  { file: H, fn: 'addSubMulI', match: /r \+ 0 -> r - 0/, reason: 'equivalent: r - 0 leaves a -0 where r + 0 gives 0, and -0 is 0 for every use the VM makes of it (===, <, BigInt, the storage encoding, results)' },
  { file: H, fn: 'divModI', match: /\+ 0 -> .* - 0$/, reason: 'equivalent: - 0 leaves a -0 where + 0 gives 0, and -0 is 0 for every use the VM makes of it (===, <, BigInt, the storage encoding, results)' },
  { file: H, fn: 'cast', match: /./, reason: 'equivalent: the number fast path of CAST only skips inRange for values it certainly holds; narrowing or widening it sends more values to inRange, which answers the same' },
  { file: H, fn: 'mapKey', match: /k instanceof Uint8Array -> false/, reason: 'equivalent: encodeRt of bytes or a key returns the value itself' },
  { file: H, fn: 'len', match: /typeof v === 'string' -> true/, reason: 'equivalent: Buffer.byteLength of a Uint8Array is its length' },
  { file: H, fn: 'outpoint', match: /^bitwise:v >>> (8|16|24) -> v >> \1$/, reason: 'equivalent: an arithmetic instead of a logical shift whose result is stored in a byte (Uint8Array keeps the low 8 bits, which both shifts give alike)' },
  { file: H, fn: 'output', match: /o\.value|context output value|^literal:0n -> -?1n$/, reason: 'not consensus: a check of the caller\'s own arguments (a programming error of the node, never input from a block or a peer): every caller passes values of the checked shape (the execution context a block\'s transaction gives)' },
  { file: H, fn: 'ret', match: /^condition:hasRet -> true$|^literal:1 -> 2$/, reason: 'equivalent: reading the top of a function that returns nothing (never used: no value is pushed, the entry\'s result is null), and pc -2 instead of -1 (the loop only tests pc < 0)' },
  { file: H, fn: 'xcall', match: /^comparison:i < argc -> i <= argc$/, reason: 'equivalent: the one extra slot copied is the callee\'s first local past its parameters, which the verifier proves is written before it is read' },
  { file: X, fn: 'Machine.run', lines: [256, 256], match: /./, reason: 'not yet: a LOOP whose counter holds a u64 past 2^53 (hand-written bytecode storing a large argument in the counter); the handler then neither increments the counter nor jumps, where docs/LANGUAGE.md says LOOP increments it (see the issue report): left unpinned until that is decided' },
  { file: 'src/state/merkle.ts', fn: 'SortedMerkleTree.rebuild', match: /dirtyLeaves\.clear/, reason: 'equivalent for every node: dirtyLeaves is filled only by set(), which no node path calls (a summary is built in one go from a sorted list)' },
  { file: 'src/state/merkle.ts', fn: 'SortedMerkleTree.ensureLevels', match: /^condition:!this\.levels -> true$/, reason: 'equivalent: rebuilding the levels every time gives the same levels (a memo)' },
  { file: H, fn: 'unverified', match: /./, reason: 'equivalent: reached only by an opcode byte the verifier refuses; no verified program reaches it' },
  { file: VAL, fn: 'encodeRt', match: /^literal:0 -> -?1$|^comparison:x >= 0 -> x [><] 0$/, reason: 'equivalent: the number path of the u64/i64 encoder also writes the right two\'s complement bytes for a negative number (hi = -1 .. -2^21, lo = x - hi * 2^32) and for 0, so moving its edge changes no byte' },
  { file: VAL, fn: 'encodeRt', match: /^literal:24 -> 2[35]$/, reason: 'equivalent: hi is below 2^21 for every number the path takes, so hi >>> 23, 24 or 25 are all 0' },
  { file: VAL, fn: 'encodeRt', match: /^statement:out\[0\] = hi >>> 24; -> \(removed\)$|^statement:out\[8\] = hi >>> 24; -> \(removed\)$|^statement:out\.fill\(0, 0, 8\); -> \(removed\)$|^literal:8 -> [79]$|^literal:0 -> 1$/, reason: UNZEROED },
  { file: VAL, fn: 'encodeRt', match: /^literal:64 -> 65$|^literal:0 -> -1$/, reason: 'equivalent: BigInt.asUintN(65) of a u64 or i64 within range gives the same low 64 bits the loop stores; a loop running on to index -1 or -4 writes nothing (a Buffer ignores negative indexes)' },
  { file: VAL, fn: 'decodeRt', match: /b\.length !== (8|16) -> false|b\.length !== 1 \|\| b\[0\] > 1|b\.length === 32 -> true/, reason: NON_CANONICAL },
  { file: VAL, fn: 'decodeRt', match: /^comparison:b\[9\] < 0x20 -> b\[9\] >= 0x20$/, reason: 'equivalent: the bigint path reads every u128 exactly, and norm() turns one below 2^53 into the same number the number path would give' },
  { file: VAL, fn: 'big', match: /./, reason: 'equivalent: BigInt() of a bigint is that bigint' },
  { file: VAL, fn: 'decodeRt', match: /^bitwise:\(\(b\[9\] << 16\) \| \(b\[10\] << 8\) \| b\[11\]\) >>> 0 -> .* >> 0$/, reason: 'equivalent: b[9] is below 0x20 on this path, so the 24-bit word has no sign bit to lose' },
  { file: VAL, fn: 'inRange', match: /^boolean:false -> true$/, reason: 'equivalent: every caller passes an integer type code (the verifier checks CAST\'s and constants\' types, rtHasType only asks for u64, i64 and u128)' },
  { file: VAL, fn: 'rtHasType', match: /^boolean:false -> true$/, reason: 'equivalent: a FUNC header\'s parameter types are 1..7 (the verifier refuses others), so the default branch is never taken' },
  { file: VAL, fn: 'decodeRt', match: /^literal:0 -> -1$|^literal:0 -> 1$|^literal:1 -> 2$/, reason: 'equivalent or not consensus: in the u128 number-path test, "=== -1" only sends every value to the exact bigint path (same value); in the bool decoder, reading b[1] or b[-1] or allowing b[0] = 2 only accepts non-canonical committed storage, which the VM never writes (every byte position of the u128 test is pinned by the vals-read-u128-byte*-only cases)' },
  { file: T, fn: 'bit', match: /./, reason: 'equivalent: depth is 0..256 and path bytes are 0..255, so arithmetic and logical shifts give the same bits' },
  { file: T, fn: 'samePath', match: /^literal:32 -> 33$|^comparison:i < 32 -> i <= 32$/, reason: 'equivalent: paths are 32 bytes; the extra step compares undefined with undefined' },
  { file: T, fn: 'sameKey', match: /^comparison:i < a\.length -> i <= a\.length$/, reason: 'equivalent: the lengths are equal here; the extra step compares undefined with undefined' },
  { file: T, match: /this\.count(\+\+|--)|^literal:0 -> -?1$/, reason: 'not consensus: MerkleTrie.size (count) is read by no node path (state roots and storage sizes are computed otherwise)' },
  { file: T, fn: 'MerkleTrie.entries', match: /./, reason: 'not consensus: entries() is read by no node path that decides a root (no caller in src/ or the protocol\'s state code)' },
  { file: T, fn: 'MerkleTrie.unlink', match: /leaf\.next === null -> false|leaf\.next = null/, reason: 'equivalent: a bucket left holding null reads as empty (find, set and entries all stop at null), and a removed leaf\'s next pointer is never followed again (a key written again gets a new leaf)' },
  { file: T, fn: 'MerkleTrie.insert', match: /node === null -> false/, reason: 'equivalent: with an empty child the loop ends with node null and d one deeper, and the code after it puts the leaf into that same child' },
  { file: T, fn: 'MerkleTrie.insert', match: /samePath|two keys with the same path/, reason: 'equivalent: two keys with one path would be a SHA-256 collision of their tagged hashes; no input reaches it' },
  { file: T, fn: 'MerkleTrie.remove', match: /./, reason: 'equivalent: an entry found in the read map is always on its own path (the trie\'s invariant); no input reaches the throw' },
  { file: T, fn: 'MerkleTrie.hashOf', match: /node\.hash !== null -> false/, reason: 'equivalent: a memo of a pure function (a node\'s hash from its children): recomputing gives the same hash' },
  { file: T, fn: 'verifyTrieProof', match: /s\.length !== 32|sibling is not 32 bytes/, reason: 'equivalent: trieNodeHash refuses a sibling that is not 32 bytes itself, with the same answer (ok: false)' },
  { file: ST, fn: 'StateTree.idKey', match: /last\.length === id\.length -> last\.length !== id\.length|i < id\.length -> i <= id\.length|!same -> true|this\.lastId = new Uint8Array/, reason: 'equivalent: a memo of the last contract id\'s hex key: ids are all 32 bytes, and computing the hex again gives the same key' },
  { file: ST, fn: 'StateTree.removeContract', match: /./, reason: 'equivalent: removing a contract never added deletes nothing from the trie; a removed contract left in the dirty set is skipped by root() (its entry is gone)' },
  { file: ST, fn: 'StateTree.root', match: /./, reason: 'equivalent: the dirty set only holds contracts that exist (removeContract takes them out); rebuilding an entry already up to date writes the same value' },
  { file: ST, fn: 'StateTree.setStorage', match: /./, reason: 'not consensus: a check of the caller\'s own arguments (a programming error of the node, never input from a block or a peer): the ledger writes only to contracts it has deployed' },
  { file: ST, fn: 'StateTree.prove', match: /./, reason: 'not consensus: a proof served to REST clients; the roots it proves are pinned by roots.* and its folding by roots.trie-proof' },
  { file: D, fn: 'decodeDecision', match: /truncated|b\.length - o|^literal:34 -> 3[35]$|2 \+ n|o > b\.length|status === undefined|unknown status byte|does not decode|^literal:2 -> [13]$/, reason: CANONICAL_LEAF },
  { file: D, fn: 'checkRootParts', match: /./, reason: 'not consensus: a client\'s check of a decision proof; no node path calls it (verifyDecisionProof has no caller in src/)' },
  { file: D, fn: 'verifyDecisionProof', match: /./, reason: 'not consensus: a client\'s check of a decision proof; no node path calls it (no caller in src/)' },
];
