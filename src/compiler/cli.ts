#!/usr/bin/env node
/** compile <contract_file> [--json] [-o FILE] — see docs/LANGUAGE.md. */
import { readFileSync, writeFileSync } from 'node:fs';
import { TYPE_NAMES } from '@svc-node/protocol/vm/isa';
import { disassemble } from '../vm/disasm.js';
import { compileSource, formatCompileError } from './index.js';
import { endQuietlyOnClosedOutput } from '../closed-output.js';
import { deployableBodyBytes } from '@svc-node/protocol/contract';
import { MAX_BODY_BYTES } from '@svc-node/protocol/limits';

const USAGE = 'usage: compile <contract_file.svc> [--json] [-o FILE]';

function main(argv: string[]): number {
  let file: string | null = null;
  let json = false;
  let out: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '-o' || a === '--output') {
      out = argv[++i] ?? null;
      if (!out) { process.stderr.write(`compile: -o needs a file name\n${USAGE}\n`); return 2; }
    } else if (a === '-h' || a === '--help') { process.stdout.write(USAGE + '\n'); return 0; }
    else if (a.startsWith('-')) { process.stderr.write(`compile: unknown option ${a}\n${USAGE}\n`); return 2; }
    else if (file === null) file = a;
    else { process.stderr.write(`compile: only one contract file per run\n${USAGE}\n`); return 2; }
  }
  if (!file) { process.stderr.write(USAGE + '\n'); return 2; }
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (e) {
    process.stderr.write(`compile: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}\n`);
    return 1;
  }
  const r = compileSource(source, file);
  if (!r.ok) {
    for (const e of r.errors) process.stderr.write(formatCompileError(e, source) + '\n');
    process.stderr.write(`${r.errors.length} error${r.errors.length === 1 ? '' : 's'}\n`);
    return 1;
  }
  const a = r.artifact;
  const text = json || out ? JSON.stringify(a, null, 2) + '\n' : '';
  if (out) {
    try {
      writeFileSync(out, text);
    } catch (e) {
      process.stderr.write(`compile: cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? 'error'}\n`);
      return 1;
    }
  }
  if (json) {
    if (!out) process.stdout.write(text);
    return 0;
  }
  const lines: string[] = [];
  lines.push(`contract ${a.metadata.name}  (${a.metadata.compiler_version})`);
  lines.push(`code_hash   ${a.metadata.code_hash}`);
  lines.push(`bytecode    ${a.bytecode.length / 2} bytes, ${a.constants.length} constants`);
  lines.push(`deploy      ${deployableBodyBytes(a)} of the ${MAX_BODY_BYTES} bytes a registration may take (room for the anchoring transaction included)`);
  if (a.metadata.interfaces.length) lines.push(`implements  ${a.metadata.interfaces.join(', ')}`);
  for (const e of a.abi) {
    if (e.type === 'field') lines.push(`field       ${e.name}: ${e.key ? `map<${e.key}, ${e.value}>` : e.value}`);
    else if (e.type === 'event') lines.push(`event       ${e.name}(${e.inputs.map((p) => `${p.name}: ${p.type}`).join(', ')})`);
    else lines.push(`function    ${e.readonly ? 'readonly ' : ''}${e.name}(${e.inputs.map((p) => `${p.name}: ${p.type}`).join(', ')})${e.outputs.length ? ' -> ' + e.outputs.map((o) => o.type).join(', ') : ''}  @${a.function_offsets[e.name]}`);
  }
  void TYPE_NAMES;
  lines.push('');
  lines.push(disassemble(a));
  process.stdout.write(lines.join('\n'));
  if (out) process.stdout.write(`wrote ${out}\n`);
  return 0;
}

endQuietlyOnClosedOutput();
try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`compile: internal error: ${(e as Error).message}\n`);
  process.exitCode = 1;
}
