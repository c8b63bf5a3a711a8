// Mutant schemata over compiled JavaScript (conformance/README.md, "The mutation run"): parses a
// dist/ file with TypeScript's parser and writes it back with every mutant in place, each
// behind a switch `__m(ID)` that is true only while that mutant is active. One copy of
// the code then holds every mutant, so a single adapter process can run mutant after
// mutant; `__m` also records which mutants a case reaches (the run's coverage).
import ts from 'typescript';

/** The switch every mutated file starts with: the active mutant and the hit set live on globalThis, shared by all files. */
export const PRELUDE =
  'const __mstate = (globalThis.__svcMutation ??= { active: Number(process.env.SVC_MUTANT ?? -1), hits: new Set() });\n' +
  'const __m = (id) => { if (__mstate.hits !== null) __mstate.hits.add(id); return __mstate.active === id; };\n';

const COMPARISONS = {
  '<': ['<=', '>='],
  '<=': ['<', '>'],
  '>': ['>=', '<='],
  '>=': ['>', '<'],
  '===': ['!=='],
  '!==': ['==='],
  '==': ['!='],
  '!=': ['=='],
};
const ARITHMETIC = { '+': ['-'], '-': ['+'], '*': ['/'], '/': ['*'], '%': ['*'], '**': ['*'] };
const LOGICAL = { '&&': ['||'], '||': ['&&'], '??': ['&&'] };
const BITWISE = { '&': ['|'], '|': ['&'], '^': ['&'], '<<': ['>>'], '>>': ['<<'], '>>>': ['>>'] };
const COMPOUND = { '+=': ['-='], '-=': ['+='], '*=': ['/='], '/=': ['*='], '|=': ['&='], '&=': ['|='], '^=': ['&='], '<<=': ['>>='], '>>=': ['<<='], '>>>=': ['>>='], '&&=': ['||='], '||=': ['&&='], '??=': ['&&='] };
const METHOD_SWAPS = { some: 'every', every: 'some', startsWith: 'endsWith', endsWith: 'startsWith', min: 'max', max: 'min' };

function operatorKind(op) {
  if (op in COMPARISONS) return ['comparison', COMPARISONS[op]];
  if (op in ARITHMETIC) return ['arithmetic', ARITHMETIC[op]];
  if (op in LOGICAL) return ['logical', LOGICAL[op]];
  if (op in BITWISE) return ['bitwise', BITWISE[op]];
  if (op in COMPOUND) return ['assignment', COMPOUND[op]];
  return null;
}

const isStringish = (n) => ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateExpression(n);

/** Calls whose arguments are messages for people (logging), never a rule. */
function isLogCall(node) {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression.getText();
  return /^(console|log|logger|this\.log|this\.logger)\b/.test(callee) || /\.(debug|info|warn|trace)$/.test(callee);
}

/** `new SomethingError(...)`: its arguments are the error's message and detail. */
function isErrorConstruction(node) {
  return ts.isNewExpression(node) && /Error$/.test(node.expression.getText());
}

/** The name of the function `node` is in: "name", "Class.method", or "(top level)". */
function functionName(node) {
  const parts = [];
  for (let n = node.parent; n; n = n.parent) {
    if (ts.isFunctionDeclaration(n) && n.name) parts.unshift(n.name.text);
    else if ((ts.isMethodDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n)) && n.name) parts.unshift(n.name.getText());
    else if (ts.isConstructorDeclaration(n)) parts.unshift('constructor');
    else if (ts.isClassDeclaration(n) && n.name) parts.unshift(n.name.text);
    else if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.parent && ts.isVariableDeclaration(n.parent)) parts.unshift(n.parent.name.getText());
    else if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.parent && ts.isPropertyAssignment(n.parent)) parts.unshift(n.parent.name.getText().replace(/^['"]|['"]$/g, ''));
  }
  return parts.length ? parts.join('.') : '(top level)';
}

function inFunction(node) {
  for (let n = node.parent; n; n = n.parent) if (ts.isFunctionLike(n)) return true;
  return false;
}

/**
 * Instruments one compiled file. `excluded(fnName)` says whether a function is left out.
 * Returns the schemata text and the mutants, numbered from `firstId`:
 * {id, fn, operator, original, replacement, offset}.
 */
export function instrument(text, fileName, firstId, excluded) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const mutants = [];
  let nextId = firstId;
  const add = (node, operator, replacement, code) => {
    const fn = functionName(node);
    if (excluded(fn)) return null;
    const original = node.getText().replace(/\s+/g, ' ');
    const m = { id: nextId++, fn, operator, original: original.length > 80 ? original.slice(0, 77) + '...' : original, replacement: replacement.length > 80 ? replacement.slice(0, 77) + '...' : replacement, offset: node.getStart(), topLevel: !inFunction(node), code };
    mutants.push(m);
    return m;
  };

  /** The node's text with its children rendered (their mutants in place). */
  function renderChildren(node) {
    const start = node.getStart();
    let out = '';
    let at = start;
    ts.forEachChild(node, (child) => {
      const cs = child.getStart();
      if (cs < at) return; // JSDoc and the like
      out += text.slice(at, cs) + render(child);
      at = child.end;
    });
    return out + text.slice(at, node.end);
  }

  function wrapExpression(node, orig, muts) {
    if (muts.length === 0) return orig;
    return '(' + muts.map((m) => `__m(${m.id}) ? (${m.code}) : `).join('') + orig + ')';
  }

  function render(node) {
    if (isLogCall(node) || isErrorConstruction(node) || ts.isTemplateExpression(node) || ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      return node.getText();
    }
    const muts = [];
    const push = (m) => m && muts.push(m);

    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.getText();
      const kind = operatorKind(op);
      const concat = op === '+' && (isStringish(node.left) || isStringish(node.right));
      if (kind && !concat) {
        const [operator, alternatives] = kind;
        const l = render(node.left);
        const r = render(node.right);
        const orig = operator === 'assignment' ? `${l} ${op} ${r}` : `(${l}) ${op} (${r})`;
        for (const alt of alternatives) {
          const code = operator === 'assignment' ? `${l} ${alt} ${r}` : `(${l}) ${alt} (${r})`;
          push(add(node, operator, `${node.left.getText()} ${alt} ${node.right.getText()}`.replace(/\s+/g, ' '), code));
        }
        return wrapExpression(node, orig, muts);
      }
    }

    if (ts.isNumericLiteral(node) || ts.isBigIntLiteral(node)) {
      const parent = node.parent;
      const isKey = (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent)) && parent.name === node;
      if (!isKey) {
        const big = ts.isBigIntLiteral(node);
        const raw = node.getText().replace(/_/g, '');
        let value = null;
        if (big) value = BigInt(raw.slice(0, -1));
        else if (/^(0[xXoObB])?[0-9a-fA-F]+$/.test(raw) && Number.isSafeInteger(Number(raw))) value = Number(raw);
        if (value !== null) {
          const one = big ? 1n : 1;
          for (const v of [value + one, value - one]) {
            const lit = big ? `${v}n` : `${v}`;
            push(add(node, 'literal', lit, `${lit}`));
          }
        }
      }
      return wrapExpression(node, node.getText(), muts);
    }

    if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) {
      const alt = node.kind === ts.SyntaxKind.TrueKeyword ? 'false' : 'true';
      push(add(node, 'boolean', alt, alt));
      return wrapExpression(node, node.getText(), muts);
    }

    if (ts.isPrefixUnaryExpression(node)) {
      const op = ts.tokenToString(node.operator);
      const inner = render(node.operand);
      if ((op === '!' || op === '~' || (op === '-' && !ts.isNumericLiteral(node.operand) && !ts.isBigIntLiteral(node.operand)))) {
        push(add(node, 'unary', node.operand.getText(), `${inner}`));
      } else if (op === '++' || op === '--') {
        const alt = op === '++' ? '--' : '++';
        push(add(node, 'update', `${alt}${node.operand.getText()}`, `${alt}${inner}`));
      }
      return wrapExpression(node, `${op}${inner}`, muts);
    }

    if (ts.isPostfixUnaryExpression(node)) {
      const op = ts.tokenToString(node.operator);
      const inner = render(node.operand);
      const alt = op === '++' ? '--' : '++';
      push(add(node, 'update', `${node.operand.getText()}${alt}`, `${inner}${alt}`));
      return wrapExpression(node, `${inner}${op}`, muts);
    }

    if (ts.isPropertyAccessExpression(node) && Object.hasOwn(METHOD_SWAPS, node.name.text) && ts.isCallExpression(node.parent) && node.parent.expression === node) {
      const name = node.name.text;
      if ((name !== 'min' && name !== 'max') || node.expression.getText() === 'Math') {
        const obj = render(node.expression);
        const dot = node.questionDotToken ? '?.' : '.';
        // A method swap keeps the call's `this`: the choice is made on the name, not by wrapping the member.
        const orig = `${obj}${dot}${name}`;
        const m = add(node, 'method', `${node.expression.getText()}${dot}${METHOD_SWAPS[name]}`, null);
        if (!m) return orig;
        return `${obj}${dot === '?.' ? '?.' : ''}[__m(${m.id}) ? ${JSON.stringify(METHOD_SWAPS[name])} : ${JSON.stringify(name)}]`;
      }
    }

    // Conditions: forced true and false (if, ternary), forced false (loops: true would only hang).
    const conditionOf = (n) => (ts.isIfStatement(n) || ts.isConditionalExpression(n) ? [n.expression ?? n.condition, ['true', 'false']] : ts.isWhileStatement(n) || ts.isDoStatement(n) ? [n.expression, ['false']] : ts.isForStatement(n) && n.condition ? [n.condition, ['false']] : null);
    const cond = conditionOf(node);
    if (cond) {
      const [c, forced] = [ts.isConditionalExpression(node) ? node.condition : cond[0], cond[1]];
      const start = node.getStart();
      const cs = c.getStart();
      let out = text.slice(start, cs);
      const renderedCond = render(c);
      const cm = forced.map((v) => add(c, 'condition', v, v)).filter(Boolean);
      out += wrapExpression(c, renderedCond, cm);
      let at = c.end;
      ts.forEachChild(node, (child) => {
        if (child === c) return;
        const chs = child.getStart();
        if (chs < at) return;
        out += text.slice(at, chs) + render(child);
        at = child.end;
      });
      return out + text.slice(at, node.end);
    }

    // Statements removed: an expression statement, a throw, a break or continue.
    const removable = (ts.isExpressionStatement(node) && !isLogCall(node.expression) && !(ts.isStringLiteral(node.expression))) || ts.isThrowStatement(node) || ts.isBreakStatement(node) || ts.isContinueStatement(node);
    if (removable) {
      const inner = ts.isBreakStatement(node) || ts.isContinueStatement(node) ? node.getText() : renderChildren(node);
      const m = add(node, 'statement', '(removed)', null);
      return m ? `{ if (!__m(${m.id})) { ${inner} } }` : inner;
    }

    return renderChildren(node);
  }

  let body = '';
  let at = 0;
  for (const st of sf.statements) {
    const s = st.getStart();
    body += text.slice(at, s) + render(st);
    at = st.end;
  }
  body += text.slice(at);
  // After the imports' hoisting nothing runs before the prelude; a leading shebang or directive stays first.
  return { text: PRELUDE + body, mutants };
}
