/**
 * Label matchers built from names kapi has validated, and only from those (SPEC §19, pure). A value is written as a
 * PromQL string literal with every character that could end or bend it escaped; a set of names becomes an anchored
 * RE2 alternation of the names with every regex metacharacter quoted. Nothing a caller sends reaches PromQL any other
 * way: KubeSphere 3.4 pasted `resources_filter` and path names into its templates as they came (a namespace viewer
 * could close the quotes and read every namespace's series).
 */

/** A PromQL (Go) double-quoted string literal of `value`. */
export function quoted(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    if (char === '\\') out += '\\\\';
    else if (char === '"') out += '\\"';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** RE2's metacharacters, quoted with a backslash (regexp.QuoteMeta's set). */
export function quoteMeta(value: string): string {
  return value.replace(/[\\.+*?()|[\]{}^$]/g, (char) => `\\${char}`);
}

/** `label="value"`. */
export const equals = (label: string, value: string) => `${label}=${quoted(value)}`;
export const notEquals = (label: string, value: string) => `${label}!=${quoted(value)}`;

/** `label=~"^(?:a|b)$"`: exactly one of the names (none: a regex that matches no value but the empty one). */
export function oneOf(label: string, names: readonly string[]): string {
  return `${label}=~${quoted(`^(?:${names.map(quoteMeta).join('|')})$`)}`;
}

/** `label=~"<pattern>"` for a regex kapi wrote itself (never one a caller sent). */
export const matchesOwn = (label: string, pattern: string) => `${label}=~${quoted(pattern)}`;

/** The names a selector picks: all of them, or exactly these. */
export type Names = { all: true } | { names: readonly string[] };

/** `label` for `names`: nothing when all are wanted, else `label=~"^(?:…)$"`. */
export function nameMatcher(label: string, names: Names): string[] {
  return 'all' in names ? [] : [oneOf(label, names.names)];
}
