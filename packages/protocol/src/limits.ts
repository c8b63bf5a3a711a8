/**
 * The size limits of PROTOCOL section 3, in a module of their own so that the compiler and
 * the CLI's light start-up can read them without loading the envelope codec.
 */

/** PROTOCOL section 3: borsh(whole envelope) is at most 65,536 bytes. */
export const MAX_ENVELOPE_BYTES = 65_536;

/**
 * PROTOCOL section 3 and SERVICE-SPEC section 8: the HTTP body of `POST /contract_call`
 * (and of `POST /deploy_contract`) is at most the same 65,536 bytes as the envelope.
 */
export const MAX_BODY_BYTES = MAX_ENVELOPE_BYTES;

/**
 * PROTOCOL section 3 / SERVICE-SPEC section 8: a payload peers relay (a call envelope or a
 * deploy's registration body) is at most the same 65,536 bytes as REST takes.
 */
export const MAX_PAYLOAD_BYTES = MAX_ENVELOPE_BYTES;

/** Bytes of a JSON request body as it is posted: `JSON.stringify`, UTF-8 (what the node counts against MAX_BODY_BYTES). */
export function postedBytes(body: unknown): number {
  return Buffer.byteLength(JSON.stringify(body), 'utf8');
}
