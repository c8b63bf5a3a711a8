/**
 * Names an artifact declares (packages/protocol/src/identifiers.ts, isName, read by the
 * verifier for every ABI entry): an identifier of at most 64 characters, given as a JSON
 * string. At 64 and one past, and a list holding a name instead of the name.
 */
import { OP } from '@svc-node/protocol/vm/isa';
import { hex, type CaseInput } from './kit.js';

const MAIN = { type: 'function', name: 'main', inputs: [], outputs: [], readonly: false };

function artifactWithEvent(name: unknown): Record<string, unknown> {
  return {
    bytecode: hex(Uint8Array.from([OP.FUNC, 0, 0, 0, 0, OP.RET])),
    abi: [MAIN, { type: 'event', name, inputs: [] }],
    function_offsets: { main: 0 },
    function_offset_to_locals: { '0': 0 },
    constants: [],
  };
}

export function nameEdgeCases(): CaseInput[] {
  const c = (id: string, name: unknown, pins: string): CaseInput => ({ id, pins, input: { artifact: artifactWithEvent(name) } });
  return [
    c('event-name-64-chars', `e${'v'.repeat(63)}`, 'a name of 64 characters (the most) is accepted'),
    c('event-name-65-chars', `e${'v'.repeat(64)}`, 'a name of 65 characters is refused (offset -1: the artifact\'s JSON)'),
    c('event-name-in-a-list', ['ev'], 'a name given as a list holding a string is refused: a name is a JSON string'),
  ];
}
