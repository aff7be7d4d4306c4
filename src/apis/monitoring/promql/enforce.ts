import { childrenOf, selectorsOf, type Expr, type VectorSelector } from './ast.js';
import { PromQLError } from './promql-error.js';

/**
 * What an ad-hoc query may cost and whose series it may read (SPEC §19): limits on the tree kapi read, and the
 * caller's namespace on every selector of it. Pure; each refusal a PromQLError naming the limit or the matcher.
 */

export interface QueryLimits {
  /** Bytes of the query as written. */
  maxBytes: number;
  maxSelectors: number;
  /** Expressions inside one another (parsePromQL's `maxDepth`). */
  maxDepth: number;
  /** A range selector's or a subquery's window. */
  maxWindowMs: number;
  /** Points one subquery evaluates per series (its window over its step). */
  maxSubqueryPoints: number;
}

export const QUERY_LIMITS: QueryLimits = {
  maxBytes: 4096,
  maxSelectors: 20,
  maxDepth: 50,
  maxWindowMs: 24 * 3600_000,
  maxSubqueryPoints: 11_000,
};

const NAMESPACE = 'namespace';

/** Refuses a query past `limits` (its size and depth are checked before it is read: queryTooLarge, parsePromQL). */
export function checkLimits(expr: Expr, limits: QueryLimits = QUERY_LIMITS): void {
  const selectors = [...selectorsOf(expr)].length;
  if (selectors > limits.maxSelectors)
    throw new PromQLError(`the query has ${selectors} selectors; at most ${limits.maxSelectors} are allowed`);
  walk(expr, (node) => {
    const window = node.kind === 'matrix' || node.kind === 'subquery' ? node.rangeMs : 0;
    if (window > limits.maxWindowMs)
      throw new PromQLError(
        `a ${node.kind === 'matrix' ? 'range' : 'subquery'} window of ${window / 1000} s is longer than the ` +
          `${limits.maxWindowMs / 1000} s allowed`,
      );
    if (node.kind === 'subquery' && node.stepMs > 0 && node.rangeMs / node.stepMs > limits.maxSubqueryPoints)
      throw new PromQLError(
        `a subquery of ${Math.floor(node.rangeMs / node.stepMs)} points per series is more than the ` +
          `${limits.maxSubqueryPoints} allowed`,
      );
  });
}

/** Whether a query's text is past the size limit (checked before anything reads it). */
export function queryTooLarge(query: string, limits: QueryLimits = QUERY_LIMITS): PromQLError | undefined {
  const bytes = Buffer.byteLength(query);
  return bytes > limits.maxBytes
    ? new PromQLError(`the query is ${bytes} bytes; at most ${limits.maxBytes} are allowed`)
    : undefined;
}

/**
 * The query confined to `namespace`: `namespace="<ns>"` on every selector. A selector's own matcher on `namespace`
 * that is not exactly that is refused (the caller meant other series; silently replacing it would answer someone
 * else's question with an empty one), as is writing a `namespace` label into an answer (`label_replace`,
 * `label_join`, `count_values`): no series of the answer then looks like another namespace's.
 */
export function confineToNamespace(expr: Expr, namespace: string): Expr {
  walk(expr, (node) => {
    if (node.kind === 'call' && (node.func === 'label_replace' || node.func === 'label_join')) {
      if (stringArg(node.args[1]) === NAMESPACE)
        throw new PromQLError(`${node.func}() may not write the ${NAMESPACE} label in a namespace’s query`);
    }
    if (node.kind === 'aggregate' && node.op === 'count_values' && node.param && stringArg(node.param) === NAMESPACE)
      throw new PromQLError(`count_values() may not write the ${NAMESPACE} label in a namespace’s query`);
  });
  return mapSelectors(expr, (selector) => {
    const own = selector.matchers.filter((matcher) => matcher.name === NAMESPACE);
    for (const matcher of own)
      if (matcher.op !== '=' || matcher.value !== namespace)
        throw new PromQLError(
          `the matcher ${NAMESPACE}${matcher.op}${JSON.stringify(matcher.value)} conflicts with the namespace ` +
            `${JSON.stringify(namespace)} the query is asked in`,
        );
    return {
      ...selector,
      matchers: [
        ...selector.matchers.filter((matcher) => matcher.name !== NAMESPACE),
        { name: NAMESPACE, op: '=', value: namespace },
      ],
    };
  });
}

/** A string argument's value (Prometheus reads one through parentheses), or undefined when it is not a literal. */
function stringArg(arg: Expr | undefined): string | undefined {
  let inner = arg;
  while (inner?.kind === 'paren') inner = inner.expr;
  return inner?.kind === 'string' ? inner.value : undefined;
}

function walk(expr: Expr, visit: (node: Expr) => void): void {
  visit(expr);
  for (const child of childrenOf(expr)) walk(child, visit);
}

/** A copy of `expr` with each vector selector replaced by `change(selector)`. */
function mapSelectors(expr: Expr, change: (selector: VectorSelector) => VectorSelector): Expr {
  const map = (node: Expr): Expr => mapSelectors(node, change);
  switch (expr.kind) {
    case 'vector':
      return change(expr);
    case 'matrix':
      return { ...expr, vector: change(expr.vector) };
    case 'subquery':
    case 'paren':
    case 'unary':
      return { ...expr, expr: map(expr.expr) };
    case 'binary':
      return { ...expr, lhs: map(expr.lhs), rhs: map(expr.rhs) };
    case 'aggregate':
      return { ...expr, expr: map(expr.expr), ...(expr.param && { param: map(expr.param) }) };
    case 'call':
      return { ...expr, args: expr.args.map(map) };
    default:
      return expr;
  }
}
