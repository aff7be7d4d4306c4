/**
 * Kubernetes label selectors (`a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3`), parsed and matched as
 * k8s.io/apimachinery/pkg/labels does: the same grammar, the same key and value validation, the same meaning of each
 * operator. Parse once, match many: a parsed selector is immutable and matching allocates nothing.
 */
export type SelectorOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | '>' | '<';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  /** One value for =, ==, !=, >, <; one or more for in/notin; none for exists and !. */
  readonly values: ReadonlySet<string>;
  /** The integer of `>` and `<`, parsed once. */
  readonly bound?: bigint;
}

export interface LabelSelector {
  /** All must hold (comma is AND). Empty: the selector matches everything. */
  readonly requirements: readonly LabelRequirement[];
}

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

export const EVERYTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]) });

export function parseLabelSelector(text: string): LabelSelector {
  const tokens = lex(text);
  if (tokens.length === 1) return EVERYTHING;
  return Object.freeze({ requirements: Object.freeze(new Parser(tokens).parse()) });
}

export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  for (const requirement of selector.requirements) {
    if (!matchesRequirement(requirement, labels)) return false;
  }
  return true;
}

function matchesRequirement(r: LabelRequirement, labels: Readonly<Record<string, string>> | undefined): boolean {
  // Label values are strings, so a non-string is an absent label: this also keeps inherited members such as
  // `constructor` (a valid label key) from counting as present, without the cost of a hasOwn lookup.
  const value: unknown = labels?.[r.key];
  const has = typeof value === 'string';
  switch (r.operator) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'in':
    case '=':
    case '==':
      return has && r.values.has(value);
    case 'notin':
    case '!=':
      return !has || !r.values.has(value);
    case '>':
    case '<': {
      const actual = has ? parseInteger(value) : undefined;
      if (actual === undefined) return false;
      const bound = r.bound as bigint;
      return r.operator === '>' ? actual > bound : actual < bound;
    }
  }
}

// ---- lexer ----

type TokenKind = 'identifier' | 'end' | '!' | '!=' | '=' | '==' | '>' | '<' | '(' | ')' | ',' | 'in' | 'notin';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** 0-based offset in the selector text, for error messages. */
  readonly at: number;
}

const SPECIAL = new Set(['!', '=', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
const SYMBOLS: readonly TokenKind[] = ['!=', '==', '!', '=', '>', '<', '(', ')', ','];

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (WHITESPACE.has(ch)) {
      i++;
    } else if (SPECIAL.has(ch)) {
      // Longest match first, as the apimachinery lexer does ("!=" before "!").
      const symbol = SYMBOLS.find((s) => text.startsWith(s, i)) as TokenKind;
      tokens.push({ kind: symbol, text: symbol, at: i });
      i += symbol.length;
    } else {
      const start = i;
      while (i < text.length && !WHITESPACE.has(text[i] as string) && !SPECIAL.has(text[i] as string)) i++;
      const word = text.slice(start, i);
      tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'identifier', text: word, at: start });
    }
  }
  tokens.push({ kind: 'end', text: 'end of string', at: text.length });
  return tokens;
}

// ---- parser ----

class Parser {
  private position = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const next = this.peek();
      if (next.kind === 'end') return requirements;
      if (next.kind !== 'identifier' && next.kind !== '!') throw unexpected(next, "'!', a label key or the end");
      requirements.push(this.requirement());
      const after = this.take();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') throw unexpected(after, "',' or the end");
      const following = this.peek();
      if (following.kind !== 'identifier' && following.kind !== '!') {
        throw unexpected(following, "'!' or a label key after ','");
      }
    }
  }

  /** In value position the keywords are plain words: `in in (in)` selects the label "in" with the value "in". */
  private peek(): Token {
    return asValue(this.tokens[this.position] as Token);
  }

  private take(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.position++;
    return token;
  }

  private requirement(): LabelRequirement {
    let token = this.take();
    const negated = token.kind === '!';
    if (negated) token = this.take();
    if (token.kind !== 'identifier') throw unexpected(token, 'a label key');
    const key = token.text;
    validateKey(key);
    const next = this.peek();
    if (negated || next.kind === 'end' || next.kind === ',') {
      return requirement(key, negated ? '!' : 'exists', []);
    }
    const operator = this.operator();
    const values = operator === 'in' || operator === 'notin' ? this.valueList() : [this.exactValue()];
    return requirement(key, operator, values);
  }

  private operator(): SelectorOperator {
    const token = this.tokens[this.position] as Token; // raw: here "in"/"notin" are operators
    switch (token.kind) {
      case '=':
      case '==':
      case '!=':
      case '>':
      case '<':
      case 'in':
      case 'notin':
        this.position++;
        return token.kind;
      default:
        throw unexpected(token, "an operator ('=', '==', '!=', 'in', 'notin', '>' or '<')");
    }
  }

  private exactValue(): string {
    const next = this.peek();
    if (next.kind === 'end' || next.kind === ',') return ''; // "a=" selects an empty value
    const token = this.take();
    if (token.kind !== 'identifier') throw unexpected(token, 'a value');
    return token.text;
  }

  /** `(x, y)`, where empty entries (`()`, `(,x)`, `(x,)`) stand for the empty value, as in apimachinery. */
  private valueList(): string[] {
    const open = this.take();
    if (open.kind !== '(') throw unexpected(open, "'('");
    const values: string[] = [];
    let expectValue = true;
    for (;;) {
      const token = this.take();
      if (token.kind === ')') {
        if (expectValue) values.push('');
        return values;
      }
      if (token.kind === ',') {
        if (expectValue) values.push('');
        expectValue = true;
      } else if (token.kind === 'identifier' && expectValue) {
        values.push(token.text);
        expectValue = false;
      } else {
        throw unexpected(token, expectValue ? "a value, ',' or ')'" : "',' or ')'");
      }
    }
  }
}

function asValue(token: Token): Token {
  return token.kind === 'in' || token.kind === 'notin' ? { ...token, kind: 'identifier' } : token;
}

function unexpected(token: Token, expected: string): LabelSelectorError {
  const found = token.kind === 'end' ? 'the end' : `'${token.text}'`;
  return new LabelSelectorError(`found ${found} at position ${token.at}, expected ${expected}`);
}

function requirement(key: string, operator: SelectorOperator, values: string[]): LabelRequirement {
  for (const value of values) validateValue(key, value);
  if (operator === '>' || operator === '<') {
    const bound = parseInteger(values[0] as string);
    if (bound === undefined) {
      throw new LabelSelectorError(`for '${operator}' the value of "${key}" must be an integer, not "${values[0]}"`);
    }
    return Object.freeze({ key, operator, values: new Set(values), bound });
  }
  return Object.freeze({ key, operator, values: new Set(values) });
}

// ---- validation (k8s.io/apimachinery/pkg/util/validation: IsQualifiedName, IsValidLabelValue) ----

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_RULE = "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character";

function validateKey(key: string): void {
  const parts = key.split('/');
  if (parts.length > 2) {
    throw new LabelSelectorError(`invalid label key "${key}": at most one '/' (an optional DNS subdomain prefix)`);
  }
  const name = parts[parts.length - 1] as string;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix.length === 0) throw new LabelSelectorError(`invalid label key "${key}": the prefix before '/' is empty`);
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      throw new LabelSelectorError(
        `invalid label key "${key}": the prefix must be a DNS subdomain (lower-case alphanumerics, '-' and '.', at most 253 characters)`,
      );
    }
  }
  if (name.length === 0) throw new LabelSelectorError(`invalid label key "${key}": the name part is empty`);
  if (name.length > 63) throw new LabelSelectorError(`invalid label key "${key}": the name part exceeds 63 characters`);
  if (!NAME.test(name)) throw new LabelSelectorError(`invalid label key "${key}": the name part must be ${NAME_RULE}`);
}

function validateValue(key: string, value: string): void {
  if (value.length > 63) throw new LabelSelectorError(`invalid value for label "${key}": exceeds 63 characters`);
  if (value.length > 0 && !NAME.test(value)) {
    throw new LabelSelectorError(`invalid value "${value}" for label "${key}": must be empty or ${NAME_RULE}`);
  }
}

/** A base-10 64-bit integer, as strconv.ParseInt(s, 10, 64) accepts it. */
function parseInteger(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : undefined;
}
