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

type Slot = keyof Slots;
/** A template read once: text, and selectors as their parts (a matcher, or a slot). */
type Piece = string | { parts: (string | { slot: Slot })[] };

const compiled = new Map<string, Piece[]>();

/** Reads a template into pieces (once per template: expansion is then a join). */
function compile(template: string): Piece[] {
  const pieces: Piece[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    const char = template[i] as string;
    if (char === '"' || char === "'" || char === '`') {
      // a string argument (a label_replace's "$1") is copied as it is
      const end = closingQuote(template, i);
      text += template.slice(i, end + 1);
      i = end + 1;
    } else if (char === '{') {
      const end = closingBrace(template, i);
      if (text) pieces.push(text);
      text = '';
      pieces.push({
        parts: matchersOf(template.slice(i + 1, end)).flatMap((part): (string | { slot: Slot })[] =>
          part === '$1' || part === '$2' || part === '$S' ? [{ slot: part }] : part === '' ? [] : [part],
        ),
      });
      i = end + 1;
    } else {
      text += char;
      i++;
    }
  }
  if (text) pieces.push(text);
  return pieces;
}

/**
 * A template with its slots filled (pure): inside each selector's braces, a slot token stands for its matchers, and
 * the matchers are joined by commas, empty and repeated ones dropped. Braces not following a name (a regex's
 * `{1,10}` inside a quoted value is a value's) are left alone, as is anything outside braces.
 */
export function expandTemplate(template: string, slots: Slots): string {
  let pieces = compiled.get(template);
  if (!pieces) {
    pieces = compile(template);
    compiled.set(template, pieces);
  }
  let out = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      out += piece;
      continue;
    }
    const matchers: string[] = [];
    for (const part of piece.parts) {
      // a slot may repeat a matcher another holds (a pod's namespace is also the route's scope): written once
      if (typeof part === 'string') {
        if (!matchers.includes(part)) matchers.push(part);
      } else for (const matcher of slots[part.slot]) if (!matchers.includes(matcher)) matchers.push(matcher);
    }
    out += `{${matchers.join(', ')}}`;
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
