import { parser } from '@prometheus-io/lezer-promql';

/**
 * Reading PromQL with the parser Prometheus publishes (@prometheus-io/lezer-promql), for tests: every selector of a
 * query with its matchers, values unquoted as Go unquotes them (Prometheus's parser is Go's).
 */
export interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export interface Selector {
  text: string;
  metric?: string;
  matchers: Matcher[];
}

export interface ParsedQuery {
  /** Text of each error node (none for a query Prometheus would parse). */
  errors: string[];
  selectors: Selector[];
}

export function parsePromql(query: string): ParsedQuery {
  const tree = parser.parse(query);
  const errors: string[] = [];
  const selectors: Selector[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: ${JSON.stringify(query.slice(node.from, node.to + 10))}`);
      if (node.name !== 'VectorSelector') return;
      const selector: Selector = { text: query.slice(node.from, node.to), matchers: [] };
      const identifier = node.node.getChild('Identifier');
      if (identifier) selector.metric = query.slice(identifier.from, identifier.to);
      const matchers = node.node.getChild('LabelMatchers');
      for (const matcher of matchers?.getChildren('UnquotedLabelMatcher') ?? []) {
        const label = matcher.getChild('LabelName');
        const op = matcher.getChild('MatchOp');
        const value = matcher.getChild('StringLiteral');
        if (!label || !op || !value) {
          errors.push(`incomplete matcher ${query.slice(matcher.from, matcher.to)}`);
          continue;
        }
        selector.matchers.push({
          label: query.slice(label.from, label.to),
          op: query.slice(op.from, op.to) as Matcher['op'],
          value: goUnquote(query.slice(value.from, value.to)),
        });
      }
      if (matchers?.getChildren('QuotedLabelMatcher').length || matchers?.getChildren('QuotedLabelName').length)
        errors.push(`a quoted label name in ${selector.text}`);
      selectors.push(selector);
    },
  });
  return { errors, selectors };
}

/** Go's strconv.Unquote for the double-quoted and raw literals PromQL has. */
export function goUnquote(literal: string): string {
  const quote = literal[0];
  if (quote === '`') return literal.slice(1, -1);
  if ((quote !== '"' && quote !== "'") || literal.at(-1) !== quote) throw new Error(`not a literal: ${literal}`);
  let out = '';
  const body = literal.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string;
    if (char === quote) throw new Error(`unescaped quote in ${literal}`);
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = body[++i];
    const simple: Record<string, string> = {
      n: '\n',
      r: '\r',
      t: '\t',
      '\\': '\\',
      '"': '"',
      "'": "'",
      a: '\x07',
      b: '\b',
      f: '\f',
      v: '\v',
    };
    if (next !== undefined && next in simple) out += simple[next];
    else if (next === 'x') {
      out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (next === 'u' || next === 'U') {
      const digits = next === 'u' ? 4 : 8;
      out += String.fromCodePoint(parseInt(body.slice(i + 1, i + 1 + digits), 16));
      i += digits;
    } else throw new Error(`unknown escape \\${next} in ${literal}`);
  }
  return out;
}
