/**
 * LDAP's string forms, pure: RFC 4515 search-filter values and RFC 4514 distinguished names. The settings parser
 * checks configured DNs with them and the LDAP provider escapes every value it puts into a filter, so a login name
 * such as `*)(uid=*` is a value to match, never filter syntax.
 */

/** RFC 4515 §3: `*`, `(`, `)`, `\` and NUL must be escaped as `\XX`; other control characters are escaped too. */
export function escapeFilterValue(value: string): string {
  let escaped = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === '*' || char === '(' || char === ')' || char === '\\' || code < 0x20 || code === 0x7f) {
      escaped += `\\${code.toString(16).padStart(2, '0')}`;
    } else {
      escaped += char;
    }
  }
  return escaped;
}

/** `(attribute=value)` with the value escaped; `attribute` must already be a valid attribute description. */
export function equalityFilter(attribute: string, value: string): string {
  return `(${attribute}=${escapeFilterValue(value)})`;
}

/** `(&a b …)` of filters that are already well formed; one filter is returned as it is. */
export function andFilter(filters: readonly string[]): string {
  return filters.length === 1 ? filters[0]! : `(&${filters.join('')})`;
}

/** One attribute type and value of a relative distinguished name, the value unescaped (UTF-8 text). */
export interface AttributeTypeAndValue {
  type: string;
  value: string;
}

/** A parsed DN: its RDNs from the leftmost (the entry itself) to the rightmost (the root). */
export type DistinguishedName = AttributeTypeAndValue[][];

export class DnSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DnSyntaxError';
  }
}

const DESCR = /^[A-Za-z][A-Za-z0-9-]*$/;
const NUMERIC_OID = /^[0-9]+(\.[0-9]+)*$/;
/** Characters RFC 4514 lets a backslash escape as themselves. */
const ESCAPABLE = new Set([' ', '"', '#', '+', ',', ';', '<', '=', '>', '\\']);

/** RFC 4512 attribute type: a name (`uid`, `memberOf`) or a numeric OID. */
export function isAttributeType(value: string): boolean {
  return value.length <= 128 && (DESCR.test(value) || NUMERIC_OID.test(value));
}

/**
 * Parses an RFC 4514 DN. Values come back unescaped; a `#hex` value (BER) is kept as written. The empty string is
 * the root DN (no RDNs). Throws `DnSyntaxError` saying where the text stops making sense.
 */
export function parseDn(text: string): DistinguishedName {
  const rdns: DistinguishedName = [];
  if (text === '') return rdns;
  let at = 0;
  let rdn: AttributeTypeAndValue[] = [];
  for (;;) {
    const equals = text.indexOf('=', at);
    if (equals < 0) throw new DnSyntaxError(`no "=" after position ${at}`);
    const type = text.slice(at, equals).trim();
    if (!isAttributeType(type)) throw new DnSyntaxError(`"${type.slice(0, 64)}" is not an attribute type`);
    const { value, end } = readValue(text, equals + 1);
    rdn.push({ type, value });
    at = end;
    if (at >= text.length) break;
    const separator = text[at];
    at++;
    if (separator === '+') continue;
    rdns.push(rdn);
    rdn = [];
    if (at >= text.length) throw new DnSyntaxError('the DN ends with a separator');
  }
  rdns.push(rdn);
  return rdns;
}

/**
 * One attribute value from `start` to the next unescaped `,`, `;` or `+` (or the end), unescaped. Spaces around a
 * value that were not escaped are not part of it (RFC 4514 allows none; many directories write `, ` between RDNs).
 */
function readValue(text: string, start: number): { value: string; end: number } {
  if (text[start] === '#') {
    let end = start + 1;
    while (end < text.length && /[0-9A-Fa-f]/.test(text[end]!)) end++;
    if ((end - start - 1) % 2 !== 0 || end === start + 1)
      throw new DnSyntaxError('a #hex value needs pairs of hex digits');
    return { value: text.slice(start, end), end };
  }
  /** Bytes of the value, each with whether it was written escaped. */
  const units: { byte: number; escaped: boolean }[] = [];
  let at = start;
  while (at < text.length) {
    const char = text[at]!;
    if (char === ',' || char === ';' || char === '+') break;
    if (char === '\\') {
      const next = text[at + 1];
      if (next !== undefined && ESCAPABLE.has(next)) {
        units.push({ byte: next.charCodeAt(0), escaped: true });
        at += 2;
        continue;
      }
      const hex = text.slice(at + 1, at + 3);
      if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
        units.push({ byte: parseInt(hex, 16), escaped: true });
        at += 3;
        continue;
      }
      throw new DnSyntaxError(`a backslash at position ${at} escapes nothing`);
    }
    if (char === '"' || char === '<' || char === '>' || char === '\u0000') {
      throw new DnSyntaxError(`"${char === '\u0000' ? '\\00' : char}" at position ${at} must be escaped`);
    }
    const piece = String.fromCodePoint(text.codePointAt(at)!);
    for (const byte of Buffer.from(piece, 'utf8')) units.push({ byte, escaped: false });
    at += piece.length;
  }
  const isLooseSpace = (unit: { byte: number; escaped: boolean } | undefined) => unit?.byte === 0x20 && !unit.escaped;
  let first = 0;
  let last = units.length;
  while (first < last && isLooseSpace(units[first])) first++;
  while (last > first && isLooseSpace(units[last - 1])) last--;
  const bytes = Buffer.from(units.slice(first, last).map((unit) => unit.byte));
  const value = bytes.toString('utf8');
  if (Buffer.from(value, 'utf8').compare(bytes) !== 0) throw new DnSyntaxError('an escaped value is not UTF-8');
  return { value, end: at };
}

/**
 * RFC 4514 §2.4: escapes a value for a DN string — `"+,;<>\` anywhere, `#` and space at the start, space at the end,
 * NUL as `\00`.
 */
export function escapeDnValue(value: string): string {
  let escaped = '';
  const chars = [...value];
  chars.forEach((char, index) => {
    if (char === '\u0000') escaped += '\\00';
    else if ('"+,;<>\\'.includes(char)) escaped += `\\${char}`;
    else if (index === 0 && (char === '#' || char === ' ')) escaped += `\\${char}`;
    else if (index === chars.length - 1 && char === ' ') escaped += '\\ ';
    else escaped += char;
  });
  return escaped;
}

/** The value of the leftmost RDN's first attribute (`devs` of `cn=devs,ou=groups,dc=example,dc=com`). */
export function leftmostValue(dn: string): string | undefined {
  try {
    return parseDn(dn)[0]?.[0]?.value;
  } catch {
    return undefined;
  }
}
