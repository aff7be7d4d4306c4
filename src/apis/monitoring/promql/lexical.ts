/**
 * PromQL's literals as Prometheus (Go) reads and prints them: strings (its lexer's escapes, Go's unquoting; printed
 * with Go's `%q`), numbers (printed with Go's `%v`), durations (Prometheus's `model.Duration`). Pure.
 */

/** A string literal's value, or why it is not one Prometheus reads (its lexer's rules: promql/parser/lex.go). */
export function unquote(text: string): { value: string } | { error: string } {
  const open = text[0];
  if (open === '`') {
    if (text.length < 2 || !text.endsWith('`')) return { error: 'unterminated raw string' };
    // Go's Unquote drops carriage returns from raw strings
    return { value: text.slice(1, -1).replaceAll('\r', '') };
  }
  if ((open !== '"' && open !== "'") || text.length < 2 || !text.endsWith(open))
    return { error: 'unterminated quoted string' };
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  const encoder = new TextEncoder();
  for (let i = 0; i < body.length;) {
    const c = body[i] as string;
    if (c === '\n') return { error: 'unterminated quoted string' };
    if (c === open) return { error: 'unterminated quoted string' };
    if (c !== '\\') {
      const point = body.codePointAt(i) as number;
      const char = String.fromCodePoint(point);
      if (point >= 0xd800 && point < 0xe000) return { error: 'invalid UTF-8 rune' };
      bytes.push(...encoder.encode(char));
      i += char.length;
      continue;
    }
    const e = body[i + 1];
    i += 2;
    const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 };
    if (e === undefined) return { error: 'escape sequence not terminated' };
    if (e === open) bytes.push(open.charCodeAt(0));
    else if (e in simple) bytes.push(simple[e] as number);
    else {
      const form = /[0-7]/.test(e)
        ? { digits: 3, base: 8, max: 255, start: i - 1 }
        : e === 'x'
          ? { digits: 2, base: 16, max: 255, start: i }
          : e === 'u'
            ? { digits: 4, base: 16, max: 0x10ffff, start: i }
            : e === 'U'
              ? { digits: 8, base: 16, max: 0x10ffff, start: i }
              : undefined;
      if (!form) return { error: `unknown escape sequence \\${e}` };
      const digits = body.slice(form.start, form.start + form.digits);
      const valid = form.base === 8 ? /^[0-7]+$/ : /^[0-9a-fA-F]+$/;
      if (digits.length < form.digits || !valid.test(digits)) return { error: 'illegal character in escape sequence' };
      const value = parseInt(digits, form.base);
      if (value > form.max || (value >= 0xd800 && value < 0xe000))
        return { error: 'escape sequence is an invalid Unicode code point' };
      i = form.start + form.digits;
      // \x and octal escapes are bytes; \u and \U code points
      if (form.max === 255) bytes.push(value);
      else bytes.push(...encoder.encode(String.fromCodePoint(value)));
    }
  }
  try {
    return { value: new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes)) };
  } catch {
    // Prometheus takes any bytes; kapi's strings are text, and a label value is UTF-8
    return { error: 'the string is not valid UTF-8' };
  }
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const hex = (value: number, width: number) => value.toString(16).padStart(width, '0');

/** Go's `strconv.Quote` (Prometheus prints strings and matcher values with `%q`). */
export function quote(value: string): string {
  let out = '"';
  for (const char of value) {
    const point = char.codePointAt(0) as number;
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (PRINTABLE.test(char)) out += char;
    else {
      const named: Record<number, string> = { 7: 'a', 8: 'b', 12: 'f', 10: 'n', 13: 'r', 9: 't', 11: 'v' };
      if (named[point]) out += `\\${named[point]}`;
      else if (point < 0x20 || point === 0x7f) out += `\\x${hex(point, 2)}`;
      else if (point < 0x10000) out += `\\u${hex(point, 4)}`;
      else out += `\\U${hex(point, 8)}`;
    }
  }
  return `${out}"`;
}

/** Go's `fmt.Sprint(float64)`: the shortest digits, in `%e` form when the exponent is < -4 or ≥ 6. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  const digits = mantissa.replace('.', '');
  const sign = value < 0 ? '-' : '';
  if (exponent < -4 || exponent >= 6) {
    const e = Math.abs(exponent);
    return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * A number literal's value (Prometheus 2's forms: decimal, `0x` hexadecimal, `Inf`, `NaN`, with a sign), or
 * undefined. Durations as numbers and `_` between digits are Prometheus 3's and refused.
 */
export function numberOf(text: string): number | undefined {
  const match = /^([+-]?)(.*)$/s.exec(text) as RegExpExecArray;
  const sign = match[1] === '-' ? -1 : 1;
  const body = match[2] as string;
  if (/^inf$/i.test(body)) return sign * Infinity;
  if (/^nan$/i.test(body)) return NaN;
  if (/^0[xX][0-9a-fA-F]+$/.test(body)) return sign * Number(body);
  // Go's ParseInt with base 0 first: a leading 0 and octal digits is octal (0755 is 493)
  if (/^0[0-7]+$/.test(body)) return sign * parseInt(body, 8);
  if (!/^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(body)) return undefined;
  const value = Number(body);
  // Go's ParseFloat: out of range is an error, not an infinity
  return Number.isFinite(value) ? sign * value : undefined;
}

const UNITS: [string, number][] = [
  ['y', 365 * 24 * 3600_000],
  ['w', 7 * 24 * 3600_000],
  ['d', 24 * 3600_000],
  ['h', 3600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];
const DURATION = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
/** Past this, Prometheus's duration overflows (int64 nanoseconds). */
const MAX_DURATION_MS = 9_223_372_036_854;

/** Prometheus's `model.ParseDuration` (units y w d h m s ms, in that order, each at most once), in milliseconds. */
export function durationOf(text: string): number | undefined {
  if (text === '' || text === '0') return text === '0' ? 0 : undefined;
  const match = DURATION.exec(text);
  if (!match) return undefined;
  let ms = 0;
  UNITS.forEach(([, factor], index) => {
    const part = match[index + 1];
    if (part !== undefined) ms += Number(part) * factor;
  });
  return ms > MAX_DURATION_MS ? undefined : ms;
}

/** Prometheus's `model.Duration.String()`: years and weeks only when exact. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let left = ms;
  let out = '';
  for (const [unit, factor] of UNITS) {
    if ((unit === 'y' || unit === 'w') && left % factor !== 0) continue;
    const count = Math.floor(left / factor);
    if (count > 0) {
      out += `${count}${unit}`;
      left -= count * factor;
    }
  }
  return out;
}
