/** Disassembler: one line per instruction, with function headers, constants and field names. */
import { OP, OPINFO, TYPE_NAMES, fixedLength } from '@svc-node/protocol/vm/isa';
import type { Program, RtValue } from '@svc-node/protocol/vm/types';
import type { ArtifactCore } from '@svc-node/protocol/contract';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';

function show(v: RtValue): string {
  if (v instanceof Uint8Array) return '0x' + Buffer.from(v).toString('hex');
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

export function disassemble(input: Program | ArtifactCore): string {
  let prog: Program;
  if ('ops' in input) prog = input;
  else {
    const r = verifyArtifact(input);
    if (!r.ok) return `; invalid bytecode at ${r.offset}: ${r.reason}\n` + rawListing(input.bytecode);
    prog = r.program;
  }
  const lines: string[] = [];
  const pad = (n: number): string => n.toString().padStart(5, '0');
  for (let pc = 0; pc < prog.code.length; pc = prog.next[pc]!) {
    const op = prog.ops[pc]!;
    const name = OPINFO[op]!.name;
    const a = prog.a[pc]!, b = prog.b[pc]!, c = prog.c[pc]!;
    let text = name;
    switch (op) {
      case OP.FUNC: {
        const f = prog.functions[prog.funcAt[pc]!]!;
        lines.push('');
        lines.push(`${f.public ? 'pub ' : ''}${f.readonly ? 'readonly ' : ''}fn ${f.name}(${f.params.map((t) => TYPE_NAMES[t]).join(', ')})${f.ret ? ' -> ' + TYPE_NAMES[f.ret] : ''}  ; locals=${f.nlocals} max_stack=${f.maxStack}`);
        text = `FUNC locals=${f.nlocals}`;
        break;
      }
      case OP.CONST: case OP.REQUIRE: text = `${name} #${a} ${show(prog.consts[a]!)}`; break;
      case OP.LOAD: case OP.STORE: text = `${name} L${a}`; break;
      case OP.JMP: case OP.JMPF: text = `${name} ${pad(a)}`; break;
      case OP.LOOP: text = `${name} L${a} <${b} -> ${pad(c)}`; break;
      case OP.CALL: text = `${name} ${prog.functions[prog.funcAt[a]!]!.name}`; break;
      case OP.XCALL: text = `${name} ${show(prog.consts[a]!)} argc=${b} -> ${TYPE_NAMES[c]}`; break;
      case OP.CAST: case OP.INTBYTES: text = `${name} ${TYPE_NAMES[a]}`; break;
      case OP.SLOAD: case OP.SSTORE: case OP.MLOAD: case OP.MSTORE: text = `${name} ${prog.fields[a]!.name}`; break;
      case OP.EMIT: text = `${name} ${prog.events[a]!.name}`; break;
    }
    lines.push(`  ${pad(pc)}  ${text}`);
  }
  return lines.join('\n').replace(/^\n/, '') + '\n';
}

function rawListing(hex: string): string {
  if (typeof hex !== 'string' || !/^(?:[0-9a-f]{2})*$/.test(hex)) return '';
  const code = Buffer.from(hex, 'hex');
  const out: string[] = [];
  for (let pc = 0; pc < code.length; ) {
    const op = code[pc]!;
    const info = OPINFO[op];
    if (!info) {
      out.push(`  ${pc}  .byte 0x${op.toString(16)}`);
      pc++;
      continue;
    }
    const len = op === OP.FUNC ? 5 + (code[pc + 2] ?? 0) : fixedLength(op);
    out.push(`  ${pc}  ${info.name} ${Buffer.from(code.subarray(pc + 1, pc + len)).toString('hex')}`);
    pc += len;
  }
  return out.join('\n') + '\n';
}
