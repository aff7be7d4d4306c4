import { TEMPLATES } from './catalogue.js';

/** The matchers of each slot of a template (selectors.ts builds them: never text a caller sent). */
export interface Slots {
  $1: readonly string[];
  $2: readonly string[];
  /** The scope of a namespaced or workspace route; empty for a cluster-wide one. */
  $S: readonly string[];
}

export const NO_SLOTS: Slots = Object.freeze({ $1: [], $2: [], $S: [] });

/**
 * Splits the inside of a selector's braces at the commas between its matchers (a comma inside a quoted value is the
 * value's).
 */
function matchersOf(inside: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (let i = 0; i < inside.length; i++) {
    const char = inside[i] as string;
    if (quote) {
      current += char;
      if (char === '\\') current += inside[++i] ?? '';
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'" || char === '`') {
      quote = char;
      current += char;
    } else if (char === ',') {
      parts.push(current.trim());
      current = '';
    } else current += char;
  }
  parts.push(current.trim());
  return parts;
}

/**
 * A template with its slots filled (pure): inside each selector's braces, a slot token stands for its matchers, and
 * the matchers are joined by commas, empty and repeated ones dropped. Braces not following a name (a regex's `{1,10}` inside a
 * quoted value is a value's) are left alone, as is anything outside braces.
 */
export function expandTemplate(template: string, slots: Slots): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const char = template[i] as string;
    if (char === '"' || char === "'" || char === '`') {
      // a string argument (a label_replace's "$1") is copied as it is
      const end = closingQuote(template, i);
      out += template.slice(i, end + 1);
      i = end + 1;
    } else if (char === '{') {
      const end = closingBrace(template, i);
      const parts = matchersOf(template.slice(i + 1, end)).flatMap((part) =>
        part === '$1' || part === '$2' || part === '$S' ? [...slots[part]] : part === '' ? [] : [part],
      );
      // a slot may repeat a matcher another holds (a pod's namespace is also the route's scope): written once
      out += `{${[...new Set(parts)].join(', ')}}`;
      i = end + 1;
    } else {
      out += char;
      i++;
    }
  }
  return out;
}

function closingQuote(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\' && quote !== '`') i++;
    else if (text[i] === quote) return i;
  }
  throw new Error(`unterminated string in a template at ${start}`);
}

function closingBrace(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const char = text[i];
    if (char === '"' || char === "'" || char === '`') i = closingQuote(text, i);
    else if (char === '}') return i;
  }
  throw new Error(`unterminated selector in a template at ${start}`);
}

/** The PromQL of a named metric with its slots filled. */
export function queryOf(metric: string, slots: Slots): string {
  const template = TEMPLATES[metric];
  if (template === undefined) throw new Error(`no template for ${metric}`);
  return expandTemplate(template, slots);
}
