/**
 * Bearer-token check for private endpoints (SERVICE-SPEC section 5, PROTOCOL section 6):
 * no token configured -> 403 locked whatever is sent; otherwise the header must be
 * exactly "Bearer <token>" (scheme case-insensitive per RFC 7235), compared in constant
 * time over SHA-256 digests so neither content nor length leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { NodeError } from '@svc-node/protocol/errors';

export class BearerAuth {
  private readonly digest: Buffer | null;

  constructor(token: string | null) {
    this.digest = token ? createHash('sha256').update(token, 'utf8').digest() : null;
  }

  check(authorization: string): void {
    if (!this.digest) throw new NodeError('locked', 'this endpoint is locked: the node has no api_token configured');
    const m = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization);
    const given = createHash('sha256').update(m ? m[1]! : '', 'utf8').digest();
    const match = timingSafeEqual(given, this.digest);
    if (!m || !match) throw new NodeError('unauthorized', 'missing or wrong bearer token');
  }
}
