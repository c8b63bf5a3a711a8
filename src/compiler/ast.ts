/** AST of the contract language (docs/LANGUAGE.md). */
import type { ValueType } from '../protocol/value.js';

export interface Pos { line: number; col: number }
export type BinOp = '+' | '-' | '*' | '/' | '%' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

export type Expr =
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
  | { k: 'cast'; pos: Pos; e: Expr; to: ValueType };

export type Stmt =
  | { k: 'let'; pos: Pos; name: string; type: ValueType | null; init: Expr }
  | { k: 'assign'; pos: Pos; name: string; key: Expr | null; value: Expr }
  /** `name op= value` / `name[key] op= value`: the key is evaluated once. */
  | { k: 'compound'; pos: Pos; opPos: Pos; op: BinOp; name: string; key: Expr | null; value: Expr }
  | { k: 'if'; pos: Pos; cond: Expr; then: Stmt[]; else: Stmt[] | null }
  | { k: 'for'; pos: Pos; name: string; from: bigint; to: bigint; body: Stmt[] }
  | { k: 'break'; pos: Pos }
  | { k: 'continue'; pos: Pos }
  | { k: 'return'; pos: Pos; value: Expr | null }
  | { k: 'require'; pos: Pos; cond: Expr; msg: string }
  | { k: 'emit'; pos: Pos; name: string; args: Expr[] }
  | { k: 'expr'; pos: Pos; e: Expr };

export interface Param { name: string; type: ValueType; pos: Pos }
export interface FieldDecl { k: 'field'; pos: Pos; name: string; key: ValueType | null; value: ValueType }
export interface EventDecl { k: 'event'; pos: Pos; name: string; params: Param[] }
export interface FnDecl { k: 'fn'; pos: Pos; name: string; pub: boolean; readonly: boolean; params: Param[]; ret: ValueType | null; body: Stmt[] }
export interface ContractDecl { name: string; pos: Pos; implements: { name: string; pos: Pos }[]; fields: FieldDecl[]; events: EventDecl[]; fns: FnDecl[] }
