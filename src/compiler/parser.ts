/** Scanner and recursive-descent parser. Errors are collected; the parser resynchronises at
 *  the next ';' or '}' so one run reports every syntax error it can. Nesting is bounded
 *  (MAX_NESTING), so no later stage can run out of stack on a hostile or generated file. */
import type { ValueType } from '@svc-node/protocol/value';
import { LIMITS } from '@svc-node/protocol/vm/isa';
import { MAX_NAME_CHARS } from '@svc-node/protocol/identifiers';
import type { BinOp, ConstDecl, ContractDecl, EventDecl, Expr, FieldDecl, FnDecl, LoopBound, Param, Pos, Stmt } from './ast.js';

export interface CompileError { file: string; line: number; col: number; message: string }

type TokKind = 'ident' | 'int' | 'hex' | 'str' | 'punct' | 'eof';
interface Tok { kind: TokKind; text: string; pos: Pos; value?: bigint | string | Uint8Array; suffix?: ValueType | null }

export const TYPE_WORDS = new Set(['u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key']);
const KEYWORDS = new Set(['contract', 'implements', 'const', 'field', 'map', 'event', 'pub', 'readonly', 'fn', 'let', 'if', 'else', 'for', 'in',
  'break', 'continue', 'return', 'require', 'emit', 'true', 'false', 'call', 'as', 'while', 'loop']);
const PUNCT = ['..', '->', '+=', '-=', '*=', '/=', '%=', '<=', '>=', '==', '!=', '&&', '||', '{', '}', '(', ')', '[', ']', '<', '>', '=', ';', ':', ',', '+', '-', '*', '/', '%', '!'];

/** Deepest nesting of parentheses, unary operators, casts, call arguments and blocks. Each
 *  level costs the parser about ten stack frames and the checker two, so 128 levels stay far
 *  inside Node's default stack, while real contracts rarely nest beyond ten. */
export const MAX_NESTING = 128;
/** The most digits a decimal literal may have (leading zeros aside): u128's maximum has 39. */
const MAX_INT_DIGITS = 39;
/** Compound assignment operators and the arithmetic operator each one applies. */
const COMPOUND: Record<string, BinOp> = { '+=': '+', '-=': '-', '*=': '*', '/=': '/', '%=': '%' };

class Bail extends Error {}

export function parse(src: string, file: string): { contract: ContractDecl | null; errors: CompileError[] } {
  const errors: CompileError[] = [];
  const err = (pos: Pos, message: string): void => {
    errors.push({ file, line: pos.line, col: pos.col, message });
  };
  const toks = scan(src, err);
  let i = 0;
  const peek = (o = 0): Tok => toks[Math.min(i + o, toks.length - 1)]!;
  const at = (text: string): boolean => { const t = peek(); return (t.kind === 'punct' || t.kind === 'ident') && t.text === text; };
  const next = (): Tok => toks[Math.min(i++, toks.length - 1)]!;
  const fail = (t: Tok, msg: string): never => {
    err(t.pos, msg);
    throw new Bail();
  };
  const describe = (t: Tok): string => (t.kind === 'eof' ? 'end of file' : `'${t.text}'`);
  let nesting = 0;
  const enter = (t: Tok): void => {
    if (nesting >= MAX_NESTING) fail(t, `nesting deeper than ${MAX_NESTING} levels (split the expression or the function)`);
    nesting++;
  };
  /** Runs one nested construct starting at token t, failing at t beyond MAX_NESTING levels. */
  const nested = <T>(t: Tok, body: () => T): T => {
    enter(t);
    try {
      return body();
    } finally {
      nesting--;
    }
  };
  const expect = (text: string): Tok => {
    const t = peek();
    if (!at(text)) fail(t, `expected '${text}', found ${describe(t)}`);
    return next();
  };
  const ident = (what: string): Tok => {
    const t = peek();
    if (t.kind !== 'ident' || KEYWORDS.has(t.text) || TYPE_WORDS.has(t.text)) fail(t, `expected ${what}, found ${describe(t)}`);
    return next();
  };
  /** A name the artifact declares (function, parameter, event, field), which the verifier bounds. */
  const declared = (what: string): Tok => {
    const t = ident(what);
    if (t.text.length > MAX_NAME_CHARS) err(t.pos, `${what} is longer than ${MAX_NAME_CHARS} characters`);
    return t;
  };
  const type = (): ValueType => {
    const t = peek();
    if (t.kind !== 'ident' || !TYPE_WORDS.has(t.text)) fail(t, `expected a type (u64, i64, u128, bool, string, bytes, key), found ${describe(t)}`);
    return next().text as ValueType;
  };
  const sync = (): void => {
    // skip to after the next ';' or to a '}' (left for the caller), keeping brace balance
    let depth = 0;
    while (peek().kind !== 'eof') {
      const t = peek();
      if (t.text === '{' && t.kind === 'punct') depth++;
      if (t.text === '}' && t.kind === 'punct') {
        if (depth === 0) return;
        depth--;
        if (depth === 0) { next(); return; }
      }
      next();
      if (t.text === ';' && depth === 0) return;
    }
  };

  const params = (): Param[] => {
    expect('(');
    const ps: Param[] = [];
    while (!at(')')) {
      const n = declared('a parameter name');
      expect(':');
      ps.push({ name: n.text, type: type(), pos: n.pos });
      if (!at(')')) expect(',');
    }
    expect(')');
    return ps;
  };

  // ---- expressions ----
  const expr = (): Expr => orExpr();
  const binLevel = (ops: string[], sub: () => Expr): (() => Expr) => () => {
    let l = sub();
    while (peek().kind === 'punct' && ops.includes(peek().text)) {
      const t = next();
      const r = sub();
      l = { k: 'bin', pos: t.pos, op: t.text as BinOp, l, r };
    }
    return l;
  };
  const primary = (): Expr => {
    const t = peek();
    if (t.kind === 'int') { next(); return { k: 'int', pos: t.pos, value: t.value as bigint, suffix: t.suffix ?? null }; }
    if (t.kind === 'str') { next(); return { k: 'str', pos: t.pos, value: t.value as string }; }
    if (t.kind === 'hex') { next(); return { k: 'hex', pos: t.pos, value: t.value as Uint8Array }; }
    if (at('true') || at('false')) { next(); return { k: 'bool', pos: t.pos, value: t.text === 'true' }; }
    if (at('(')) return nested(next(), () => { const e = expr(); expect(')'); return e; });
    if (at('call')) return nested(next(), () => {
      let ret: ValueType | null = null;
      if (at('<')) { next(); ret = type(); expect('>'); }
      expect('(');
      const target = expr();
      expect(',');
      const fnTok = peek();
      if (fnTok.kind !== 'str') fail(fnTok, 'expected the callee function name as a string literal');
      next();
      const args: Expr[] = [];
      while (at(',')) { next(); args.push(expr()); }
      expect(')');
      return { k: 'xcall', pos: t.pos, ret, target, fn: fnTok.value as string, args } as Expr;
    });
    if (t.kind === 'ident' && !KEYWORDS.has(t.text) && !TYPE_WORDS.has(t.text)) {
      next();
      if (at('(')) {
        return nested(next(), () => {
          const args: Expr[] = [];
          while (!at(')')) { args.push(expr()); if (!at(')')) expect(','); }
          expect(')');
          return { k: 'call', pos: t.pos, name: t.text, args } as Expr;
        });
      }
      if (at('[')) return nested(next(), () => { const key = expr(); expect(']'); return { k: 'index', pos: t.pos, name: t.text, key } as Expr; });
      return { k: 'name', pos: t.pos, name: t.text };
    }
    return fail(t, `expected an expression, found ${describe(t)}`);
  };
  const postfix = (): Expr => {
    let e = primary();
    // every cast wraps the tree one level deeper, so a chain counts against the bound
    const outer = nesting;
    try {
      while (at('as')) {
        const t = next();
        enter(t);
        e = { k: 'cast', pos: t.pos, e, to: type() };
      }
    } finally {
      nesting = outer;
    }
    return e;
  };
  const unary = (): Expr => {
    if (at('!') || at('-')) { const t = next(); return nested(t, () => ({ k: 'unary', pos: t.pos, op: t.text as '!' | '-', e: unary() }) as Expr); }
    return postfix();
  };
  const mulExpr = binLevel(['*', '/', '%'], unary);
  const addExpr = binLevel(['+', '-'], mulExpr);
  const cmpExpr = binLevel(['<', '<=', '>', '>='], addExpr);
  const eqExpr = binLevel(['==', '!='], cmpExpr);
  const andExpr = binLevel(['&&'], eqExpr);
  const orExpr = binLevel(['||'], andExpr);

  // ---- statements ----
  // the bound is checked at the '{' before it is consumed, so resynchronising skips the whole block
  const block = (): Stmt[] => nested(peek(), () => {
    expect('{');
    const out: Stmt[] = [];
    while (!at('}') && peek().kind !== 'eof') {
      const start = i;
      try {
        out.push(stmt());
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        sync();
        if (i === start) next();
      }
    }
    expect('}');
    return out;
  });
  const bound = (): LoopBound => {
    const t = peek();
    if (t.kind === 'ident' && !KEYWORDS.has(t.text) && !TYPE_WORDS.has(t.text)) { next(); return { pos: t.pos, name: t.text }; }
    if (t.kind !== 'int' || t.suffix) fail(t, 'loop bounds must be integer literals without suffix or u64 constants');
    next();
    return { pos: t.pos, value: t.value as bigint };
  };
  const stmt = (): Stmt => {
    const t = peek();
    if (at('let')) {
      next();
      const n = ident('a variable name');
      let ty: ValueType | null = null;
      if (at(':')) { next(); ty = type(); }
      expect('=');
      const init = expr();
      expect(';');
      return { k: 'let', pos: n.pos, name: n.text, type: ty, init };
    }
    if (at('if')) return ifStmt();
    if (at('for')) {
      next();
      const n = ident('a loop variable');
      expect('in');
      const from = bound();
      expect('..');
      const to = bound();
      return { k: 'for', pos: t.pos, name: n.text, from, to, body: block() };
    }
    if (at('while') || at('loop')) fail(t, `'${t.text}' is not supported: loops need compile-time constant bounds (for i in 0..N)`);
    if (at('break') || at('continue')) { next(); expect(';'); return { k: t.text as 'break' | 'continue', pos: t.pos }; }
    if (at('return')) {
      next();
      const value = at(';') ? null : expr();
      expect(';');
      return { k: 'return', pos: t.pos, value };
    }
    if (at('require')) {
      next();
      expect('(');
      const cond = expr();
      expect(',');
      const m = peek();
      if (m.kind !== 'str') fail(m, 'require needs a string literal message');
      next();
      expect(')');
      expect(';');
      return { k: 'require', pos: t.pos, cond, msg: m.value as string };
    }
    if (at('emit')) {
      next();
      const n = ident('an event name');
      expect('(');
      const args: Expr[] = [];
      while (!at(')')) { args.push(expr()); if (!at(')')) expect(','); }
      expect(')');
      expect(';');
      return { k: 'emit', pos: n.pos, name: n.text, args };
    }
    const e = expr();
    const compound = peek().kind === 'punct' ? COMPOUND[peek().text] : undefined;
    if (compound) {
      const op = next();
      if (e.k !== 'name' && e.k !== 'index') fail(op, `left side of ${op.text} must be a variable, a field or a map entry`);
      const value = expr();
      expect(';');
      const target = e as Extract<Expr, { k: 'name' | 'index' }>;
      return { k: 'compound', pos: target.pos, opPos: op.pos, op: compound, name: target.name, key: target.k === 'index' ? target.key : null, value };
    }
    if (at('=')) {
      const eq = next();
      if (e.k !== 'name' && e.k !== 'index') fail(eq, 'left side of = must be a variable, a field or a map entry');
      const value = expr();
      expect(';');
      const target = e as Extract<Expr, { k: 'name' | 'index' }>;
      return { k: 'assign', pos: target.pos, name: target.name, key: target.k === 'index' ? target.key : null, value };
    }
    expect(';');
    return { k: 'expr', pos: t.pos, e };
  };
  // An else-if chain is read with a loop, not recursion: a dispatch over thousands of cases
  // is a chain that long, and it nests no deeper than one if (the checker walks it the same way).
  const ifStmt = (): Stmt => {
    const arms: { pos: Pos; cond: Expr; then: Stmt[] }[] = [];
    let els: Stmt[] | null = null;
    for (;;) {
      const t = next();
      arms.push({ pos: t.pos, cond: expr(), then: block() });
      if (!at('else')) break;
      next();
      if (!at('if')) { els = block(); break; }
    }
    let tail: Stmt[] | null = els;
    for (let a = arms.length - 1; a >= 0; a--) tail = [{ k: 'if', pos: arms[a]!.pos, cond: arms[a]!.cond, then: arms[a]!.then, else: tail }];
    return tail![0]!;
  };

  // ---- top level ----
  const consts: ConstDecl[] = [];
  /** `const NAME: TYPE = EXPR;` (the 'const' token is next). */
  const constDecl = (): void => {
    next();
    const n = ident('a constant name');
    expect(':');
    const ty = type();
    expect('=');
    const value = expr();
    expect(';');
    consts.push({ k: 'const', pos: n.pos, name: n.text, type: ty, value });
  };
  /** Constants outside the contract, before or after it, each resynchronised on its own. */
  const moduleConsts = (): void => {
    while (at('const')) {
      const start = i;
      try {
        constDecl();
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        sync();
        if (i === start) next();
      }
    }
  };
  let contract: ContractDecl | null = null;
  try {
    moduleConsts();
    const c = expect('contract');
    const name = ident('a contract name');
    const impls: { name: string; pos: Pos }[] = [];
    if (at('implements')) {
      next();
      do {
        const it = ident('an interface name');
        impls.push({ name: it.text, pos: it.pos });
      } while (at(',') && next());
    }
    expect('{');
    const fields: FieldDecl[] = [];
    const events: EventDecl[] = [];
    const fns: FnDecl[] = [];
    contract = { name: name.text, pos: c.pos, implements: impls, consts, fields, events, fns };
    while (!at('}') && peek().kind !== 'eof') {
      const start = i;
      try {
        const t = peek();
        if (at('field')) {
          next();
          const n = declared('a field name');
          expect(':');
          if (at('map')) {
            next();
            expect('<');
            const k = type();
            expect(',');
            const v = type();
            expect('>');
            fields.push({ k: 'field', pos: n.pos, name: n.text, key: k, value: v });
          } else fields.push({ k: 'field', pos: n.pos, name: n.text, key: null, value: type() });
          expect(';');
        } else if (at('event')) {
          next();
          const n = declared('an event name');
          events.push({ k: 'event', pos: n.pos, name: n.text, params: params() });
          expect(';');
        } else if (at('pub') || at('readonly') || at('fn')) {
          let pub = false, ro = false;
          if (at('pub')) { next(); pub = true; }
          if (at('readonly')) { next(); ro = true; }
          expect('fn');
          const n = declared('a function name');
          const ps = params();
          let ret: ValueType | null = null;
          if (at('->')) { next(); ret = type(); }
          fns.push({ k: 'fn', pos: n.pos, name: n.text, pub, readonly: ro, params: ps, ret, body: block() });
        } else if (at('const')) {
          constDecl();
        } else if (at('contract')) {
          fail(t, 'only one contract per file');
        } else fail(t, `expected 'field', 'event', 'const' or a function, found ${describe(t)}`);
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        sync();
        if (i === start) next();
      }
    }
    expect('}');
    moduleConsts();
    if (at('contract')) fail(peek(), 'only one contract per file');
    if (peek().kind !== 'eof') fail(peek(), `expected 'const' or the end of the file after the contract, found ${describe(peek())}`);
  } catch (e) {
    if (!(e instanceof Bail)) throw e;
  }
  return { contract, errors };
}

function scan(src: string, err: (p: Pos, m: string) => void): Tok[] {
  const toks: Tok[] = [];
  let i = 0, line = 1, lineStart = 0;
  const pos = (at: number): Pos => ({ line, col: at - lineStart + 1 });
  while (i < src.length) {
    const ch = src.charAt(i);
    if (ch === '\n') { i++; line++; lineStart = i; continue; }
    if (ch === ' ' || ch === '\t' || ch === '\r') { i++; continue; }
    if (src.startsWith('//', i)) { while (i < src.length && src[i] !== '\n') i++; continue; }
    if (src.startsWith('/*', i)) {
      const p = pos(i);
      const end = src.indexOf('*/', i + 2);
      if (end < 0) { err(p, 'unterminated comment'); break; }
      for (let j = i; j < end; j++) if (src[j] === '\n') { line++; lineStart = j + 1; }
      i = end + 2;
      continue;
    }
    const p = pos(i);
    if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < src.length && /[A-Za-z0-9_]/.test(src.charAt(j))) j++;
      toks.push({ kind: 'ident', text: src.slice(i, j), pos: p });
      i = j;
      continue;
    }
    if (/[0-9]/.test(ch)) {
      if (src.startsWith('0x', i)) {
        let j = i + 2;
        while (j < src.length && /[0-9a-fA-F_]/.test(src.charAt(j))) j++;
        const digits = src.slice(i + 2, j).replace(/_/g, '');
        if (digits.length % 2 !== 0) err(p, 'hex literal needs an even number of digits');
        if (digits.length > 2 * LIMITS.valueBytes) err(p, `hex literal is ${Math.ceil(digits.length / 2)} bytes, at most ${LIMITS.valueBytes} allowed`);
        toks.push({ kind: 'hex', text: src.slice(i, j), pos: p, value: new Uint8Array(Buffer.from(digits.length % 2 ? '0' + digits : digits, 'hex')) });
        i = j;
        continue;
      }
      let j = i;
      while (j < src.length && /[0-9_]/.test(src.charAt(j))) j++;
      const digits = src.slice(i, j).replace(/_/g, '');
      let suffix: ValueType | null = null;
      const m = /^(u64|i64|u128)/.exec(src.slice(j, j + 4));
      if (m && !/[A-Za-z0-9_]/.test(src[j + m[1]!.length] ?? '')) { suffix = m[1] as ValueType; j += m[1]!.length; }
      else if (/[A-Za-z_]/.test(src[j] ?? '')) err(pos(j), 'bad integer literal suffix (use u64, i64 or u128)');
      const tooLong = digits.replace(/^0+/, '').length > MAX_INT_DIGITS;
      if (tooLong) err(p, `integer literal has more than ${MAX_INT_DIGITS} digits (u128 holds at most 340282366920938463463374607431768211455)`);
      toks.push({ kind: 'int', text: src.slice(i, j), pos: p, value: tooLong ? 0n : BigInt(digits), suffix });
      i = j;
      continue;
    }
    if (ch === '"') {
      let j = i + 1;
      let s = '';
      let ok = true;
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\n') { ok = false; break; }
        if (src[j] === '\\') {
          const e = src[j + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', '0': '\0' };
          if (e !== undefined && map[e] !== undefined) { s += map[e]; j += 2; continue; }
          err(pos(j), `unknown escape \\${e ?? ''}`);
          j += 2;
          continue;
        }
        s += src[j];
        j++;
      }
      if (!ok || j >= src.length) { err(p, 'unterminated string literal'); i = j; continue; }
      if (Buffer.byteLength(s, 'utf8') > LIMITS.valueBytes) err(p, `string literal is ${Buffer.byteLength(s, 'utf8')} bytes (UTF-8), at most ${LIMITS.valueBytes} allowed`);
      toks.push({ kind: 'str', text: src.slice(i, j + 1), pos: p, value: s });
      i = j + 1;
      continue;
    }
    const pu = PUNCT.find((x) => src.startsWith(x, i));
    if (pu) { toks.push({ kind: 'punct', text: pu, pos: p }); i += pu.length; continue; }
    err(p, `unexpected character '${ch}'`);
    i++;
  }
  toks.push({ kind: 'eof', text: '', pos: pos(i) });
  return toks;
}
