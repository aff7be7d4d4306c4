import { parser } from '@prometheus-io/lezer-promql';
import type { SyntaxNode } from '@lezer/common';
import type {
  AggregateOp,
  At,
  BinaryOp,
  Expr,
  MatchOp,
  Matcher,
  StringLiteral,
  ValueType,
  VectorMatching,
  VectorSelector,
} from './ast.js';
import { FUNCTIONS } from './functions.js';
import { durationOf, numberOf, unquote } from './lexical.js';
import { PromQLError } from './promql-error.js';

/**
 * A strict reading of a PromQL query (SPEC §19, ad-hoc queries): Prometheus's own grammar
 * (`@prometheus-io/lezer-promql`, published from Prometheus), then kapi's tree with Prometheus's (Go) precedence and
 * checks. Anything it does not read as Prometheus 2 does is refused: a syntax error, a node it does not know (the
 * grammar's newer forms: duration arithmetic, `fill`, `anchored`, `smoothed`, quoted label names), a function not in
 * FUNCTIONS, a type Prometheus would refuse. Pure.
 */

export { PromQLError };

const AGGREGATES = new Set<string>([
  'sum',
  'avg',
  'count',
  'min',
  'max',
  'group',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
]);
const WITH_PARAM = new Set<string>(['topk', 'bottomk', 'quantile', 'count_values']);
const BINARY_OPS = new Set<string>([
  '+',
  '-',
  '*',
  '/',
  '%',
  '^',
  'atan2',
  '==',
  '!=',
  '>',
  '<',
  '>=',
  '<=',
  'and',
  'or',
  'unless',
]);
const COMPARISONS = new Set<string>(['==', '!=', '>', '<', '>=', '<=']);
const SET_OPS = new Set<string>(['and', 'or', 'unless']);
const MATCH_OPS = new Set<string>(['=', '!=', '=~', '!~']);
const METRIC_NAME = '__name__';

/**
 * Reads `query`; throws PromQLError saying what it refused and where. `maxDepth` bounds how deep expressions nest
 * (checked on the grammar's tree, before kapi's own reading recurses into it).
 */
export function parsePromQL(query: string, options: { maxDepth?: number } = {}): Expr {
  const tree = parser.parse(query);
  const maxDepth = options.maxDepth ?? Infinity;
  let depth = 0;
  let deepest = 0;
  tree.iterate({
    enter: (node) => {
      if (node.type.is('Expr')) deepest = Math.max(deepest, ++depth);
    },
    leave: (node) => {
      if (node.type.is('Expr')) depth--;
    },
  });
  if (deepest > maxDepth) throw new PromQLError(`the query nests ${deepest} deep; at most ${maxDepth} is allowed`);
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) {
      const near = query.slice(cursor.from, cursor.from + 20);
      throw new PromQLError(
        cursor.from >= query.length
          ? 'the query ends too soon'
          : `unexpected ${JSON.stringify(near.split(/\s/)[0] || near)} at character ${cursor.from + 1}`,
        cursor.from,
      );
    }
  } while (cursor.next());
  const top = exprChildren(tree.topNode);
  if (top.length !== 1) throw new PromQLError('the query is empty');
  const reader = new Reader(query);
  const expr = reader.expr(top[0] as SyntaxNode);
  checkTypes(expr);
  return expr;
}

function exprChildren(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) if (child.type.is('Expr')) out.push(child);
  return out;
}

function childNamed(node: SyntaxNode, name: string): SyntaxNode | null {
  for (let child = node.firstChild; child; child = child.nextSibling) if (child.name === name) return child;
  return null;
}

function childrenNamed(node: SyntaxNode, name: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) if (child.name === name) out.push(child);
  return out;
}

class Reader {
  constructor(private readonly query: string) {}

  private text(node: SyntaxNode): string {
    return this.query.slice(node.from, node.to);
  }

  private refuse(node: SyntaxNode, message: string): never {
    throw new PromQLError(`${message} (at character ${node.from + 1})`, node.from);
  }

  expr(node: SyntaxNode): Expr {
    switch (node.name) {
      case 'NumberDurationLiteral':
        return { kind: 'number', value: this.number(node) };
      case 'StringLiteral':
        return this.string(node);
      case 'VectorSelector':
        return this.vectorSelector(node);
      case 'ParenExpr':
        return { kind: 'paren', expr: this.only(node) };
      case 'UnaryExpr': {
        const op = this.text(childNamed(node, 'UnaryOp') as SyntaxNode) as '-' | '+';
        const operand = this.only(node);
        // Prometheus folds a sign into a number literal
        if (operand.kind === 'number') return { kind: 'number', value: op === '-' ? -operand.value : operand.value };
        return { kind: 'unary', op, expr: operand };
      }
      case 'BinaryExpr':
        return this.binary(node);
      case 'AggregateExpr':
        return this.aggregate(node);
      case 'FunctionCall':
        return this.call(node);
      case 'MatrixSelector': {
        const rangeMs = this.duration(childNamed(node, 'DurationExpr') as SyntaxNode);
        if (rangeMs === 0) this.refuse(node, 'duration must be greater than 0');
        return this.postfix(node, this.only(node), (inner) => {
          if (inner.kind !== 'vector') this.refuse(node, 'ranges only allowed for vector selectors');
          if (inner.offsetMs !== 0) this.refuse(node, 'no offset modifiers allowed before range');
          if (inner.at !== undefined) this.refuse(node, 'no @ modifiers allowed before range');
          return { kind: 'matrix', vector: inner, rangeMs };
        });
      }
      case 'SubqueryExpr': {
        const durations = childrenNamed(node, 'DurationExpr');
        const rangeMs = this.duration(durations[0] as SyntaxNode);
        const stepMs = durations[1] ? this.duration(durations[1]) : 0;
        if (rangeMs === 0) this.refuse(node, 'duration must be greater than 0');
        return this.postfix(node, this.only(node), (inner) => ({
          kind: 'subquery',
          expr: inner,
          rangeMs,
          stepMs,
          offsetMs: 0,
        }));
      }
      case 'OffsetExpr': {
        const offsetMs = this.offset(childNamed(node, 'OffsetDurationExpr') as SyntaxNode);
        return this.postfix(node, this.only(node), (inner) => {
          const target = inner.kind === 'matrix' ? inner.vector : inner;
          if (target.kind !== 'vector' && target.kind !== 'subquery')
            this.refuse(
              node,
              'offset modifier must be preceded by an instant vector selector or range vector selector or a subquery',
            );
          if (target.offsetMs !== 0) this.refuse(node, 'offset may not be set multiple times');
          target.offsetMs = offsetMs;
          return inner;
        });
      }
      case 'StepInvariantExpr': {
        const at = this.at(node);
        // its operand is the first expression (the second is the timestamp)
        return this.postfix(node, this.expr(exprChildren(node)[0] as SyntaxNode), (inner) => {
          const target = inner.kind === 'matrix' ? inner.vector : inner;
          if (target.kind !== 'vector' && target.kind !== 'subquery')
            this.refuse(
              node,
              '@ modifier must be preceded by an instant vector selector or range vector selector or a subquery',
            );
          if (target.at !== undefined) this.refuse(node, '@ <timestamp> may not be set multiple times');
          target.at = at;
          return inner;
        });
      }
      default:
        // the grammar's forms newer than Prometheus 2 (anchored, smoothed, …)
        return this.refuse(node, `${node.name} is not supported`);
    }
  }

  /** The one expression inside `node`. */
  private only(node: SyntaxNode): Expr {
    const inner = exprChildren(node);
    if (inner.length !== 1) this.refuse(node, 'unexpected expression');
    return this.expr(inner[0] as SyntaxNode);
  }

  /**
   * A range, subquery, offset or `@` binds tighter than any operator in Prometheus (its grammar's `[` and `offset`
   * precedence): the grammar here may read `a + b[5m:]` as `(a + b)[5m:]`, so it is put on the rightmost operand,
   * as Prometheus reads it.
   */
  private postfix(node: SyntaxNode, inner: Expr, apply: (inner: Expr) => Expr): Expr {
    if (inner.kind === 'binary') return { ...inner, rhs: this.postfix(node, inner.rhs, apply) };
    if (inner.kind === 'unary') return { ...inner, expr: this.postfix(node, inner.expr, apply) };
    return apply(inner);
  }

  private number(node: SyntaxNode): number {
    // a sign the grammar reads as part of the literal may stand apart from it (spaces, a comment)
    const value = numberOf(this.text(node).replace(/^([+-])(?:\s|#[^\n]*)*/, '$1'));
    if (value === undefined) this.refuse(node, `${JSON.stringify(this.text(node))} is not a number`);
    return value;
  }

  private string(node: SyntaxNode): StringLiteral {
    const read = unquote(this.text(node));
    if ('error' in read) this.refuse(node, read.error);
    return { kind: 'string', value: read.value };
  }

  private duration(node: SyntaxNode): number {
    const literal = node.firstChild;
    if (!literal || literal.name !== 'NumberDurationLiteralInDurationContext' || literal.nextSibling)
      this.refuse(node, 'a duration must be a literal such as 5m');
    const ms = durationOf(this.text(literal));
    if (ms === undefined || !/[a-z]$/.test(this.text(literal)))
      this.refuse(node, `${JSON.stringify(this.text(literal))} is not a duration`);
    return ms;
  }

  private offset(node: SyntaxNode): number {
    const sign = childNamed(node, 'UnaryOp');
    if (sign) {
      const inner = childNamed(node, 'OffsetDurationExpr') as SyntaxNode;
      if (childNamed(inner, 'UnaryOp')) this.refuse(node, 'an offset has one sign at most');
      const ms = this.duration(inner);
      return this.text(sign) === '-' ? -ms : ms;
    }
    return this.duration(node);
  }

  private at(node: SyntaxNode): At {
    const preprocessor = childNamed(node, 'AtModifierPreprocessors');
    if (preprocessor) return preprocessor.firstChild?.name === 'AtStart' ? 'start' : 'end';
    const literal = childNamed(node, 'NumberDurationLiteral') as SyntaxNode;
    const seconds = this.number(literal);
    if (!Number.isFinite(seconds) || Math.abs(seconds) >= 9.223372036854775e18)
      this.refuse(literal, 'timestamp out of bounds for @ modifier');
    const ms = Math.round(seconds * 1000);
    if (!Number.isSafeInteger(ms)) this.refuse(literal, 'timestamp out of bounds for @ modifier');
    return { ms };
  }

  private vectorSelector(node: SyntaxNode): VectorSelector {
    const identifier = childNamed(node, 'Identifier');
    const name = identifier ? this.text(identifier) : '';
    const matchers: Matcher[] = [];
    const block = childNamed(node, 'LabelMatchers');
    for (let child = block?.firstChild ?? null; child; child = child.nextSibling) {
      if (child.name !== 'UnquotedLabelMatcher') this.refuse(child, 'quoted label names are not supported');
      const op = this.text(childNamed(child, 'MatchOp') as SyntaxNode);
      if (!MATCH_OPS.has(op)) this.refuse(child, `unknown matcher ${op}`);
      matchers.push({
        name: this.text(childNamed(child, 'LabelName') as SyntaxNode),
        op: op as MatchOp,
        value: this.string(childNamed(child, 'StringLiteral') as SyntaxNode).value,
      });
    }
    if (name && matchers.some((matcher) => matcher.name === METRIC_NAME))
      this.refuse(node, 'metric name must not be set twice');
    if (!name && !matchers.some(matchesNonEmpty))
      this.refuse(node, 'vector selector must contain at least one non-empty matcher');
    return { kind: 'vector', name, matchers, offsetMs: 0 };
  }

  private labels(node: SyntaxNode): string[] {
    if (childNamed(node, 'QuotedLabelName')) this.refuse(node, 'quoted label names are not supported');
    return childrenNamed(node, 'LabelName').map((label) => this.text(label));
  }

  private binary(node: SyntaxNode): Expr {
    const [lhsNode, rhsNode] = exprChildren(node) as [SyntaxNode, SyntaxNode];
    let op: string | undefined;
    for (let child = lhsNode.nextSibling; child && child.from < rhsNode.from; child = child.nextSibling)
      if (!['BoolModifier', 'MatchingModifierClause', 'FillModifier'].includes(child.name))
        op = this.text(child).toLowerCase();
    if (!op || !BINARY_OPS.has(op)) this.refuse(node, `unsupported operator ${op ?? ''}`.trim());
    if (childNamed(node, 'FillModifier')) this.refuse(node, 'fill modifiers are not supported');
    const clause = childNamed(node, 'MatchingModifierClause');
    let matching: VectorMatching | undefined;
    if (clause) {
      const [labels, include] = childrenNamed(clause, 'GroupingLabels');
      matching = { on: !!childNamed(clause, 'On'), labels: this.labels(labels as SyntaxNode) };
      const side = childNamed(clause, 'GroupLeft') ? 'left' : childNamed(clause, 'GroupRight') ? 'right' : undefined;
      if (side) matching.group = { side, labels: include ? this.labels(include) : [] };
    }
    return {
      kind: 'binary',
      op: op as BinaryOp,
      lhs: this.expr(lhsNode),
      rhs: this.expr(rhsNode),
      bool: !!childNamed(node, 'BoolModifier'),
      ...(matching && { matching }),
    };
  }

  private aggregate(node: SyntaxNode): Expr {
    const op = this.text(childNamed(node, 'AggregateOp') as SyntaxNode).toLowerCase();
    if (!AGGREGATES.has(op)) this.refuse(node, `the aggregation ${op} is not supported`);
    const modifier = childNamed(node, 'AggregateModifier');
    const args = exprChildren(childNamed(node, 'FunctionCallBody') as SyntaxNode).map((arg) => this.expr(arg));
    if (args.length === 0) this.refuse(node, 'no arguments for aggregate expression provided');
    const wanted = WITH_PARAM.has(op) ? 2 : 1;
    if (args.length !== wanted)
      this.refuse(
        node,
        `wrong number of arguments for aggregate expression provided, expected ${wanted}, got ${args.length}`,
      );
    return {
      kind: 'aggregate',
      op: op as AggregateOp,
      expr: args[wanted - 1] as Expr,
      ...(wanted === 2 && { param: args[0] as Expr }),
      grouping: modifier ? this.labels(childNamed(modifier, 'GroupingLabels') as SyntaxNode) : [],
      without: !!(modifier && childNamed(modifier, 'Without')),
    };
  }

  private call(node: SyntaxNode): Expr {
    const name = this.text(childNamed(node, 'FunctionIdentifier') as SyntaxNode);
    const func = FUNCTIONS.get(name);
    if (!func) this.refuse(node, `the function ${name}() is not supported`);
    const args = exprChildren(childNamed(node, 'FunctionCallBody') as SyntaxNode).map((arg) => this.expr(arg));
    const fixed = func.args.length;
    if (func.variadic === 0 && args.length !== fixed)
      this.refuse(node, `expected ${fixed} argument(s) in call to "${name}", got ${args.length}`);
    if (func.variadic !== 0 && args.length < fixed - 1)
      this.refuse(node, `expected at least ${fixed - 1} argument(s) in call to "${name}", got ${args.length}`);
    if (func.variadic > 0 && args.length > fixed - 1 + func.variadic)
      this.refuse(
        node,
        `expected at most ${fixed - 1 + func.variadic} argument(s) in call to "${name}", got ${args.length}`,
      );
    return { kind: 'call', func: name, args };
  }
}

/** Whether a matcher refuses the empty value (Prometheus wants one such in a selector without a name). */
function matchesNonEmpty(matcher: Matcher): boolean {
  switch (matcher.op) {
    case '=':
      return matcher.value !== '';
    case '!=':
      return matcher.value === '';
    default:
      return regexRefusesEmpty(matcher.op, matcher.value);
  }
}

/**
 * Whether a regex matcher refuses '' — read with JavaScript's engine on the empty string alone (no backtracking to
 * speak of); a pattern it cannot read (RE2-only syntax) counts as refusing, and Prometheus decides.
 */
function regexRefusesEmpty(op: MatchOp, pattern: string): boolean {
  let matchesEmpty: boolean;
  try {
    matchesEmpty = new RegExp(`^(?:${pattern})$`, 'u').test('');
  } catch {
    return true;
  }
  return op === '=~' ? !matchesEmpty : matchesEmpty;
}

/** The type of a query kapi read (it passed Prometheus's type checks then). */
export function valueTypeOf(expr: Expr): ValueType {
  return checkTypes(expr);
}

/** Prometheus's type checks (promql/parser/parse.go checkAST), throwing what it would say. */
function checkTypes(expr: Expr): ValueType {
  const expect = (inner: Expr, want: ValueType, context: string) => {
    const got = checkTypes(inner);
    if (got !== want) throw new PromQLError(`expected type ${typeName(want)} in ${context}, got ${typeName(got)}`);
  };
  switch (expr.kind) {
    case 'number':
      return 'scalar';
    case 'string':
      return 'string';
    case 'vector':
      return 'vector';
    case 'matrix':
      return 'matrix';
    case 'subquery':
      expect(expr.expr, 'vector', 'subquery');
      return 'matrix';
    case 'paren':
      return checkTypes(expr.expr);
    case 'unary': {
      const type = checkTypes(expr.expr);
      if (type !== 'scalar' && type !== 'vector')
        throw new PromQLError('unary expression only allowed on expressions of type scalar or instant vector');
      return type;
    }
    case 'aggregate':
      expect(expr.expr, 'vector', 'aggregation expression');
      if (expr.param) expect(expr.param, expr.op === 'count_values' ? 'string' : 'scalar', 'aggregation parameter');
      return 'vector';
    case 'call': {
      const func = FUNCTIONS.get(expr.func) as NonNullable<ReturnType<typeof FUNCTIONS.get>>;
      expr.args.forEach((arg, index) => {
        const want = func.args[Math.min(index, func.args.length - 1)] as ValueType;
        expect(arg, want, `call to function "${expr.func}"`);
      });
      return func.returns;
    }
    case 'binary':
      return checkBinary(expr);
  }
}

function checkBinary(expr: Extract<Expr, { kind: 'binary' }>): ValueType {
  const left = checkTypes(expr.lhs);
  const right = checkTypes(expr.rhs);
  if (expr.bool && !COMPARISONS.has(expr.op))
    throw new PromQLError('bool modifier can only be used on comparison operators');
  if (COMPARISONS.has(expr.op) && !expr.bool && left === 'scalar' && right === 'scalar')
    throw new PromQLError('comparisons between scalars must use BOOL modifier');
  const matching = expr.matching;
  if (matching?.on && matching.group)
    for (const label of matching.labels)
      if (matching.group.labels.includes(label))
        throw new PromQLError(`label "${label}" must not occur in ON and GROUP clause at once`);
  for (const type of [left, right])
    if (type !== 'scalar' && type !== 'vector')
      throw new PromQLError('binary expression must contain only scalar and instant vector types');
  if (left !== 'vector' || right !== 'vector') {
    if (matching && matching.labels.length > 0)
      throw new PromQLError('vector matching only allowed between instant vectors');
    // Prometheus drops a matching clause without labels between a scalar and anything
    delete expr.matching;
    if (SET_OPS.has(expr.op))
      throw new PromQLError(`set operator "${expr.op}" not allowed in binary scalar expression`);
  } else if (SET_OPS.has(expr.op) && matching?.group)
    throw new PromQLError(`no grouping allowed for "${expr.op}" operation`);
  return left === 'scalar' && right === 'scalar' ? 'scalar' : 'vector';
}

const typeName = (type: ValueType) =>
  ({ scalar: 'scalar', vector: 'instant vector', matrix: 'range vector', string: 'string' })[type];
