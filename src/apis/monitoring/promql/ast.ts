/**
 * kapi's own PromQL tree (SPEC §19, ad-hoc queries): the shape of Prometheus's Go AST (promql/parser/ast.go), so that
 * kapi's print of it is what Prometheus prints of the same query. Built only from a strict reading of a query
 * (parse.ts); what kapi sends to Prometheus is this tree's print (print.ts), never the caller's text.
 */

export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';

export type MatchOp = '=' | '!=' | '=~' | '!~';

export interface Matcher {
  name: string;
  op: MatchOp;
  value: string;
}

/** `@ <seconds>` as milliseconds, or `@ start()` / `@ end()`. */
export type At = { ms: number } | 'start' | 'end';

export interface NumberLiteral {
  kind: 'number';
  value: number;
}

export interface StringLiteral {
  kind: 'string';
  value: string;
}

export interface VectorSelector {
  kind: 'vector';
  /** The metric name written before the braces ('' when none). */
  name: string;
  matchers: Matcher[];
  /** Milliseconds, negative for a negative offset. */
  offsetMs: number;
  at?: At;
}

export interface MatrixSelector {
  kind: 'matrix';
  vector: VectorSelector;
  rangeMs: number;
}

export interface SubqueryExpr {
  kind: 'subquery';
  expr: Expr;
  rangeMs: number;
  /** 0 when not written (Prometheus's evaluation interval). */
  stepMs: number;
  offsetMs: number;
  at?: At;
}

export interface ParenExpr {
  kind: 'paren';
  expr: Expr;
}

export interface UnaryExpr {
  kind: 'unary';
  op: '-' | '+';
  expr: Expr;
}

export type BinaryOp =
  '+' | '-' | '*' | '/' | '%' | '^' | 'atan2' | '==' | '!=' | '>' | '<' | '>=' | '<=' | 'and' | 'or' | 'unless';

export interface VectorMatching {
  on: boolean;
  labels: string[];
  /** `group_left` (many-to-one) or `group_right` (one-to-many), with its labels. */
  group?: { side: 'left' | 'right'; labels: string[] };
}

export interface BinaryExpr {
  kind: 'binary';
  op: BinaryOp;
  lhs: Expr;
  rhs: Expr;
  bool: boolean;
  matching?: VectorMatching;
}

export type AggregateOp =
  | 'sum'
  | 'avg'
  | 'count'
  | 'min'
  | 'max'
  | 'group'
  | 'stddev'
  | 'stdvar'
  | 'topk'
  | 'bottomk'
  | 'quantile'
  | 'count_values';

export interface AggregateExpr {
  kind: 'aggregate';
  op: AggregateOp;
  expr: Expr;
  param?: Expr;
  grouping: string[];
  without: boolean;
}

export interface Call {
  kind: 'call';
  func: string;
  args: Expr[];
}

export type Expr =
  | NumberLiteral
  | StringLiteral
  | VectorSelector
  | MatrixSelector
  | SubqueryExpr
  | ParenExpr
  | UnaryExpr
  | BinaryExpr
  | AggregateExpr
  | Call;

/** Every expression directly below `expr`, in print order. */
export function childrenOf(expr: Expr): Expr[] {
  switch (expr.kind) {
    case 'matrix':
      return [expr.vector];
    case 'subquery':
    case 'paren':
    case 'unary':
      return [expr.expr];
    case 'binary':
      return [expr.lhs, expr.rhs];
    case 'aggregate':
      return expr.param ? [expr.param, expr.expr] : [expr.expr];
    case 'call':
      return expr.args;
    default:
      return [];
  }
}

/** Every vector selector of `expr` (those of range selectors included). */
export function* selectorsOf(expr: Expr): Generator<VectorSelector> {
  if (expr.kind === 'vector') yield expr;
  for (const child of childrenOf(expr)) yield* selectorsOf(child);
}
