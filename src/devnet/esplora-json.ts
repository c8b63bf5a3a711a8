/**
 * Esplora JSON shapes built from bitcoinjs objects, for the devnet chain server.
 * Field names and order follow electrs (API-NOTES.md): tx object, vin/vout, block object.
 * Script asm follows rust-bitcoin's style (OP_PUSHBYTES_n, OP_PUSHNUM_n, OP_0).
 */
import * as bitcoin from 'bitcoinjs-lib';
import { difficultyOfBits, displayHex, type ParsedHeader } from '@svc-node/protocol/bitcoin';
import type { TxStatus } from '../chain/esplora-client.js';

const OP_NAMES: Record<number, string> = {};
for (const [name, code] of Object.entries(bitcoin.opcodes) as [string, number][]) {
  if (OP_NAMES[code] === undefined) OP_NAMES[code] = name;
}
// rust-bitcoin spellings where they differ from bitcoinjs's first alias.
OP_NAMES[0x00] = 'OP_0';
OP_NAMES[0x4f] = 'OP_PUSHNUM_NEG1';
for (let n = 1; n <= 16; n++) OP_NAMES[0x50 + n] = `OP_PUSHNUM_${n}`;
OP_NAMES[0xb1] = 'OP_CLTV';
OP_NAMES[0xb2] = 'OP_CSV';

/** Script bytes → rust-bitcoin style asm. */
export function scriptAsm(script: Uint8Array): string {
  const out: string[] = [];
  let i = 0;
  const b = Buffer.from(script);
  while (i < b.length) {
    const op = b[i]!;
    i++;
    let len = -1;
    let name = '';
    if (op >= 0x01 && op <= 0x4b) {
      len = op;
      name = `OP_PUSHBYTES_${op}`;
    } else if (op === 0x4c || op === 0x4d || op === 0x4e) {
      const w = op === 0x4c ? 1 : op === 0x4d ? 2 : 4;
      if (i + w > b.length) {
        out.push('<unexpected end>');
        break;
      }
      len = w === 1 ? b[i]! : w === 2 ? b.readUInt16LE(i) : b.readUInt32LE(i);
      i += w;
      name = op === 0x4c ? 'OP_PUSHDATA1' : op === 0x4d ? 'OP_PUSHDATA2' : 'OP_PUSHDATA4';
    }
    if (len >= 0) {
      if (i + len > b.length) {
        out.push('<push past end>');
        break;
      }
      out.push(`${name} ${b.subarray(i, i + len).toString('hex')}`);
      i += len;
    } else {
      out.push(OP_NAMES[op] ?? `OP_RETURN_${op}`);
    }
  }
  return out.join(' ');
}

export type ScriptType = 'empty' | 'op_return' | 'p2pk' | 'p2pkh' | 'p2sh' | 'v0_p2wpkh' | 'v0_p2wsh' | 'v1_p2tr' | 'unknown';

export function scriptType(s: Uint8Array): ScriptType {
  const n = s.length;
  if (n === 0) return 'empty';
  if (s[0] === 0x6a) return 'op_return';
  if ((n === 35 && s[0] === 33 && s[34] === 0xac) || (n === 67 && s[0] === 65 && s[66] === 0xac)) return 'p2pk';
  if (n === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) return 'p2pkh';
  if (n === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) return 'p2sh';
  if (n === 22 && s[0] === 0x00 && s[1] === 0x14) return 'v0_p2wpkh';
  if (n === 34 && s[0] === 0x00 && s[1] === 0x20) return 'v0_p2wsh';
  if (n === 34 && s[0] === 0x51 && s[1] === 0x20) return 'v1_p2tr';
  return 'unknown';
}

export function scriptAddress(s: Uint8Array, network: bitcoin.Network): string | undefined {
  const t = scriptType(s);
  if (t === 'p2pkh' || t === 'p2sh' || t === 'v0_p2wpkh' || t === 'v0_p2wsh' || t === 'v1_p2tr') {
    try {
      return bitcoin.address.fromOutputScript(s, network);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export function outputJson(o: { script: Uint8Array; value: bigint }, network: bitcoin.Network): Record<string, unknown> {
  const addr = scriptAddress(o.script, network);
  const j: Record<string, unknown> = {
    scriptpubkey: Buffer.from(o.script).toString('hex'),
    scriptpubkey_asm: scriptAsm(o.script),
    scriptpubkey_type: scriptType(o.script),
  };
  if (addr !== undefined) j.scriptpubkey_address = addr;
  j.value = Number(o.value);
  return j;
}

/** Looks up a previous output; undefined when the funding transaction is unknown. */
export type PrevoutLookup = (txid: string, vout: number) => { script: Uint8Array; value: bigint } | undefined;

export function txJson(tx: bitcoin.Transaction, status: TxStatus, prevout: PrevoutLookup, network: bitcoin.Network): Record<string, unknown> {
  const coinbase = tx.isCoinbase();
  let inSum = 0n;
  let prevoutsKnown = true;
  const vin = tx.ins.map((inp) => {
    const txid = displayHex(inp.hash);
    const po = coinbase ? undefined : prevout(txid, inp.index);
    if (po) inSum += po.value;
    else if (!coinbase) prevoutsKnown = false;
    const j: Record<string, unknown> = {
      txid,
      vout: inp.index,
      prevout: po ? outputJson(po, network) : null,
      scriptsig: Buffer.from(inp.script).toString('hex'),
      scriptsig_asm: scriptAsm(inp.script),
    };
    if (inp.witness.length > 0) j.witness = inp.witness.map((w) => Buffer.from(w).toString('hex'));
    j.is_coinbase = coinbase;
    j.sequence = inp.sequence;
    if (po && scriptType(po.script) === 'p2sh') {
      const chunks = bitcoin.script.decompile(inp.script);
      const last = chunks && chunks.length > 0 ? chunks[chunks.length - 1] : undefined;
      if (last instanceof Uint8Array) {
        j.inner_redeemscript_asm = scriptAsm(last);
        if (last.length === 34 && last[0] === 0 && last[1] === 0x20 && inp.witness.length > 0) {
          j.inner_witnessscript_asm = scriptAsm(inp.witness[inp.witness.length - 1]!);
        }
      }
    } else if (po && scriptType(po.script) === 'v0_p2wsh' && inp.witness.length > 0) {
      j.inner_witnessscript_asm = scriptAsm(inp.witness[inp.witness.length - 1]!);
    }
    return j;
  });
  const outSum = tx.outs.reduce((a, o) => a + o.value, 0n);
  return {
    txid: tx.getId(),
    version: tx.version >>> 0,
    locktime: tx.locktime,
    vin,
    vout: tx.outs.map((o) => outputJson(o, network)),
    size: tx.byteLength(),
    weight: tx.weight(),
    fee: coinbase || !prevoutsKnown ? 0 : Number(inSum - outSum),
    status,
  };
}

export function blockJson(
  h: ParsedHeader,
  height: number,
  txCount: number,
  size: number,
  weight: number,
  mediantime: number,
): Record<string, unknown> {
  return {
    id: h.hash,
    height,
    version: h.version,
    timestamp: h.timestamp,
    tx_count: txCount,
    size,
    weight,
    merkle_root: h.merkleRoot,
    previousblockhash: height === 0 ? null : h.prevHash,
    mediantime,
    nonce: h.nonce,
    bits: h.bits,
    difficulty: difficultyOfBits(h.bits),
  };
}
