// TEMPORARY (lead's worktree): replaced by the evidence helper's module at merge.
export interface Inclusion { blockHash: string; height: number; txIndex: number; branch: Uint8Array[] }
export interface SpentBy { tx: Uint8Array; vin: number; at: Inclusion }
export interface Evidence { anchorTx: Uint8Array; confirmed: Inclusion | null; spentBy: SpentBy | null }
export function encodeEvidence(e: Evidence): Buffer { return Buffer.from(JSON.stringify({ a: Buffer.from(e.anchorTx).toString('hex'), c: e.confirmed && { ...e.confirmed, branch: e.confirmed.branch.map((b) => Buffer.from(b).toString('hex')) }, s: e.spentBy && { tx: Buffer.from(e.spentBy.tx).toString('hex'), vin: e.spentBy.vin, at: { ...e.spentBy.at, branch: e.spentBy.at.branch.map((b) => Buffer.from(b).toString('hex')) } } })); }
export function decodeEvidence(b: Uint8Array): Evidence { const j = JSON.parse(Buffer.from(b).toString()); const inc = (x: any): Inclusion => ({ ...x, branch: x.branch.map((h: string) => Buffer.from(h, 'hex')) }); return { anchorTx: Buffer.from(j.a, 'hex'), confirmed: j.c && inc(j.c), spentBy: j.s && { tx: Buffer.from(j.s.tx, 'hex'), vin: j.s.vin, at: inc(j.s.at) } }; }
