/** Scenario shared by the main thread and the worker in the determinism test. */
import { execute } from '../../src/vm/execute.js';
import type { Program } from '@svc-node/protocol/vm/types';
import { MemHost, compile, ctx, id, key, serialize, u64, load } from '../helpers/vm.js';

export function runScenario(inner: string, outer: string, host: MemHost, programs?: Program[]): string {
  const I = host.deploy(id(1), programs ? programs[0]! : load(compile(inner)));
  const O = host.deploy(id(2), programs ? programs[1]! : load(compile(outer)));
  const out: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = execute({ contractId: O, function: i % 2 ? 'then_fail' : 'ok', args: [key(I), u64(1000 + i)], context: ctx({ callId: BigInt(i) }), host });
    host.apply(r);
    out.push(serialize(r));
  }
  return out.join('\n');
}
