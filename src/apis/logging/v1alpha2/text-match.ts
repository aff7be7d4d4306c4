/**
 * KubeSphere's filter semantics, for backends that filter in process: a list matches exactly (any of the values),
 * a keyword list matches when any keyword is contained, ignoring case. Keywords arrive lower-cased from the parser.
 */
export type Matcher = (value: string | undefined) => boolean;

export function exactMatcher(values: readonly string[] | undefined): Matcher {
  if (!values) return () => true;
  const set = new Set(values);
  return (value) => value !== undefined && set.has(value);
}

export function keywordMatcher(keywords: readonly string[] | undefined): Matcher {
  if (!keywords) return () => true;
  // One case-insensitive alternation: faster per line than lower-casing every line.
  const pattern = new RegExp(keywords.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i');
  return (value) => value !== undefined && pattern.test(value);
}

/** Both kinds at once: the value passes when it passes the exact list and the keyword list. */
export function fieldMatcher(values: readonly string[] | undefined, keywords: readonly string[] | undefined): Matcher {
  const exact = exactMatcher(values);
  const keyword = keywordMatcher(keywords);
  return (value) => exact(value) && keyword(value);
}
