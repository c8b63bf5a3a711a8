/** A contract failure: thrown by an opcode handler or the call's checks, caught by execute()
 *  and returned as a `failed` result (code from FailureCode, types.ts). Any other thrown error
 *  is a VM bug and propagates. */
export class Halt {
  constructor(readonly code: string, readonly message: string) {}
}

export function halt(code: string, message: string): never {
  throw new Halt(code, message);
}
