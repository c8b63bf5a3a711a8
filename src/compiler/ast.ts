/** AST of the contract language (docs/LANGUAGE.md). The type checker (checker.ts) annotates
 *  each node it accepts with a Note; the emitter (codegen.ts) reads only the notes. */
import type { Value, ValueType } from '@svc-node/protocol/value';

export interface Pos { line: number; col: number }

/** What the checker decided about a node; each kind uses the fields listed at its case in checker.ts. */
export interface Note {
  /** The operand or literal type an instruction works on (int literal, bin operator, cast target, compound). */
  ty?: ValueType;
  /** Local slot (name, let, assignment to a local, for: the loop counter). */
  slot?: number;
  /** for over A..B with A > 0: the slot of the visible loop variable. */
  userSlot?: number;
  /** m[k] op= e: the hidden slot holding k. */
  keySlot?: number;
  /** Field or event index. */
  idx?: number;
  /** Built-in opcode of a call; for a cast, whether a CAST is emitted (0 = none). */
  op?: number;
  /** A negative literal, folded. */
  folded?: bigint;
  /** A hex literal used as a key; an expression statement whose value is dropped (POP). */
  flag?: boolean;
  /** A statement list that always returns (no fall-through code after it). */
  returns?: boolean;
  /** A name that is a constant: its folded value (emitted as the literal would be). */
  konst?: Value;
  /** for: the loop's bounds, literals or constants resolved. */
  range?: { from: bigint; to: bigint };
}
/** A loop bound: an integer literal or the name of a u64 constant. */
export type LoopBound = { pos: Pos; value: bigint } | { pos: Pos; name: string };
export type BinOp = '+' | '-' | '*' | '/' | '%' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

export type Expr = { note?: Note } & (
  | { k: 'int'; pos: Pos; value: bigint; suffix: ValueType | null }
  | { k: 'str'; pos: Pos; value: string }
  | { k: 'hex'; pos: Pos; value: Uint8Array }
  | { k: 'bool'; pos: Pos; value: boolean }
  | { k: 'name'; pos: Pos; name: string }
  | { k: 'index'; pos: Pos; name: string; key: Expr }
  | { k: 'call'; pos: Pos; name: string; args: Expr[] }
  | { k: 'xcall'; pos: Pos; ret: ValueType | null; target: Expr; fn: string; args: Expr[] }
  | { k: 'unary'; pos: Pos; op: '!' | '-'; e: Expr }
  | { k: 'bin'; pos: Pos; op: BinOp; l: Expr; r: Expr }
  | { k: 'cast'; pos: Pos; e: Expr; to: ValueType });

export type Stmt = { note?: Note } & (
  | { k: 'let'; pos: Pos; name: string; type: ValueType | null; init: Expr }
  | { k: 'assign'; pos: Pos; name: string; key: Expr | null; value: Expr }
  /** `name op= value` / `name[key] op= value`: the key is evaluated once. */
  | { k: 'compound'; pos: Pos; opPos: Pos; op: BinOp; name: string; key: Expr | null; value: Expr }
  | { k: 'if'; pos: Pos; cond: Expr; then: Stmt[]; else: Stmt[] | null }
  | { k: 'for'; pos: Pos; name: string; from: LoopBound; to: LoopBound; body: Stmt[] }
  | { k: 'break'; pos: Pos }
  | { k: 'continue'; pos: Pos }
  | { k: 'return'; pos: Pos; value: Expr | null }
  | { k: 'require'; pos: Pos; cond: Expr; msg: string }
  | { k: 'emit'; pos: Pos; name: string; args: Expr[] }
  | { k: 'expr'; pos: Pos; e: Expr });

export interface Param { name: string; type: ValueType; pos: Pos }
export interface FieldDecl { k: 'field'; pos: Pos; name: string; key: ValueType | null; value: ValueType }
export interface EventDecl { k: 'event'; pos: Pos; name: string; params: Param[] }
export interface FnDecl { k: 'fn'; pos: Pos; name: string; pub: boolean; readonly: boolean; params: Param[]; ret: ValueType | null; body: Stmt[]; note?: { nlocals: number; returns: boolean } }
/** `const NAME: TYPE = EXPR;` at the top of the file or among the contract's declarations (fold.ts). */
export interface ConstDecl { k: 'const'; pos: Pos; name: string; type: ValueType; value: Expr }
export interface ContractDecl { name: string; pos: Pos; implements: { name: string; pos: Pos }[]; consts: ConstDecl[]; fields: FieldDecl[]; events: EventDecl[]; fns: FnDecl[] }
