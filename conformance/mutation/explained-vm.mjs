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
  [`${V}:verify.visit:literal:2 -> 3`]: 'equivalent: a finished function is only tested for being 0 (unvisited) or 1 (on the path); 3 is neither, as 2',
  [`${V}:verify:comparison:i < functions.length -> i <= functions.length`]: 'equivalent: color[functions.length] is undefined, not 0: the extra step visits nothing',
  [`${V}:verify:condition:color[i] === 0 -> true`]: 'equivalent: walking again from a finished function meets only finished functions (no cycle through them, or the first walk refused it)',
};

export const EXPLAINED_VM_PATTERNS = [];
