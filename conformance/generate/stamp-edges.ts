/**
 * Stamps, the edges of "an OP_RETURN whose first push begins with SVC" (PROTOCOL.md
 * section 3): each magic byte changed, in a direct push and in a PUSHDATA1 push; pushes
 * too short to hold the magic; scripts that end early; a first element that is an opcode.
 */
import type { CaseInput } from './kit.js';

const h32 = 'ab'.repeat(32);
/** A deploy stamp's push (36 bytes) with the magic given. */
const deployPush = (magic: string): string => `${magic}01${h32}`;
const direct = (push: string): string => `6a${(push.length / 2).toString(16).padStart(2, '0')}${push}`;
const pushdata1 = (push: string): string => `6a4c${(push.length / 2).toString(16).padStart(2, '0')}${push}`;

export function stampEdgeCases(): CaseInput[] {
  const c = (id: string, outputs: string[], pins: string): CaseInput => ({ id, pins, input: { outputs } });
  const cases: CaseInput[] = [
    c('empty-script', [''], 'an empty output script is no stamp'),
    c('op-return-alone', ['6a'], 'OP_RETURN with nothing after it is no stamp'),
    c('push-of-two-sv', ['6a025356'], 'a first push of two bytes cannot hold the magic: no stamp'),
    c('first-element-opcode', ['6a51'], 'OP_RETURN followed by an opcode, not a push: no stamp'),
    c('pushdata1-past-end', ['6a4c'], 'a PUSHDATA1 with no length byte (the script ends): no stamp'),
    c('pushdata1-short', [pushdata1('5356')], 'a PUSHDATA1 push of two bytes cannot hold the magic: no stamp'),
    c('pushdata1-deploy', [pushdata1(deployPush('535643'))], 'a deploy stamp in a PUSHDATA1 push is a stamp'),
    c('direct-push-75', [direct(`53564302${'00'.repeat(71)}`)], 'a direct push of 75 bytes (the largest) with the magic: a stamp of the wrong length is malformed'),
    c('pushdata1-76', [pushdata1(`53564302${'00'.repeat(72)}`)], 'a PUSHDATA1 push of 76 bytes with the magic: a stamp of the wrong length is malformed'),
    c('direct-push-then-more', [`${direct(deployPush('535643'))}00`], 'a deploy stamp followed by another element is malformed'),
  ];
  const variants: [string, string][] = [['first', '545643'], ['second', '535743'], ['third', '535644']];
  for (const [which, magic] of variants) {
    cases.push(
      c(`magic-${which}-byte-direct`, [direct(deployPush(magic))], `the magic's ${which} byte changed (direct push): no stamp`),
      c(`magic-${which}-byte-pushdata1`, [pushdata1(deployPush(magic))], `the magic's ${which} byte changed (PUSHDATA1 push): no stamp`),
    );
  }
  return cases;
}

