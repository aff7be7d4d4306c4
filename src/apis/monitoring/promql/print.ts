import type { At, Expr, Matcher, VectorSelector } from './ast.js';
import { formatDuration, formatFloat, quote } from './lexical.js';

/**
 * kapi's canonical print of a query: what Prometheus's own printer (promql/parser/printer.go, `String()`) prints of
 * the same tree, so that Prometheus reads back exactly the tree kapi checked and enforced — proved against
 * Prometheus's `/api/v1/format_query`. Strings are always printed double-quoted with Go's escapes; comments and
 * spacing are the printer's, never the caller's. Pure.
 */
export function printPromQL(expr: Expr): string {
  switch (expr.kind) {
    case 'number':
      return formatFloat(expr.value);
    case 'string':
      return quote(expr.value);
    case 'vector':
      return selector(expr) + at(expr.at) + offset(expr.offsetMs);
    case 'matrix':
      return `${selector(expr.vector)}[${formatDuration(expr.rangeMs)}]${at(expr.vector.at)}${offset(expr.vector.offsetMs)}`;
    case 'subquery': {
      const step = expr.stepMs ? formatDuration(expr.stepMs) : '';
      return `${printPromQL(expr.expr)}[${formatDuration(expr.rangeMs)}:${step}]${at(expr.at)}${offset(expr.offsetMs)}`;
    }
    case 'paren':
      return `(${printPromQL(expr.expr)})`;
    case 'unary':
      return `${expr.op}${printPromQL(expr.expr)}`;
    case 'binary': {
      const matching = expr.matching;
      let clause = '';
      // a clause that names nothing is left out, as Prometheus leaves it out (`ignoring()` means no clause) …
      if (matching && (matching.on || matching.labels.length > 0)) {
        clause = ` ${matching.on ? 'on' : 'ignoring'} (${matching.labels.join(', ')})`;
        if (matching.group) clause += ` group_${matching.group.side} (${matching.group.labels.join(', ')})`;
      } else if (matching?.group) {
        // … but not a grouping: `ignoring() group_left` keeps its meaning (Prometheus 2.42's printer drops it)
        clause = ` ignoring () group_${matching.group.side} (${matching.group.labels.join(', ')})`;
      }
      return `${printPromQL(expr.lhs)} ${expr.op}${expr.bool ? ' bool' : ''}${clause} ${printPromQL(expr.rhs)}`;
    }
    case 'aggregate': {
      let out: string = expr.op;
      if (expr.without) out += ` without (${expr.grouping.join(', ')}) `;
      else if (expr.grouping.length > 0) out += ` by (${expr.grouping.join(', ')}) `;
      const param = expr.param ? `${printPromQL(expr.param)}, ` : '';
      return `${out}(${param}${printPromQL(expr.expr)})`;
    }
    case 'call':
      return `${expr.func}(${expr.args.map(printPromQL).join(', ')})`;
  }
}

function selector(vector: VectorSelector): string {
  const matchers = vector.matchers
    .filter((matcher) => !(matcher.name === '__name__' && matcher.op === '=' && matcher.value === vector.name))
    .map(printMatcher);
  if (matchers.length === 0) return vector.name;
  // Prometheus sorts them as strings (bytewise: UTF-8)
  matchers.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return `${vector.name}{${matchers.join(',')}}`;
}

const printMatcher = (matcher: Matcher) => `${matcher.name}${matcher.op}${quote(matcher.value)}`;

function at(value: At | undefined): string {
  if (value === undefined) return '';
  if (value === 'start' || value === 'end') return ` @ ${value}()`;
  return ` @ ${(value.ms / 1000).toFixed(3)}`;
}

function offset(ms: number): string {
  if (ms > 0) return ` offset ${formatDuration(ms)}`;
  if (ms < 0) return ` offset -${formatDuration(-ms)}`;
  return '';
}
