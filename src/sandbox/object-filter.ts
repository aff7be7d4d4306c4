import {
  LabelSelectorError,
  matchesLabelSelector,
  parseLabelSelector,
  type LabelSelector,
} from '../kube/label-selector.js';
import type { ResourceType } from './resource-types.js';
import { badRequest } from './status.js';
import type { StoredObject } from './stored-object.js';

/**
 * Label and field selectors applied to stored objects, for lists, watches and deletecollection. Field selectors
 * follow k8s.io/apimachinery/pkg/fields: terms joined by ',' (AND), operators '=', '==' and '!=', backslash escapes
 * in values; each type supports metadata.name, metadata.namespace and its own labels (spec.nodeName, ...).
 */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface ObjectFilter {
  readonly label: LabelSelector | undefined;
  readonly fields: readonly FieldRequirement[];
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/** Splits on separators not escaped by a backslash (escapes are kept for the value unescaping). */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + (text[i + 1] as string);
      i++;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function unescapeValue(value: string, selector: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] as string;
    if (ch !== '\\') {
      if (ch === '=' || ch === ',')
        throw badRequest(`invalid field selector: '${selector}': unescaped '${ch}' in a value`);
      out += ch;
      continue;
    }
    const next = value[i + 1];
    if (next !== '\\' && next !== ',' && next !== '=') {
      throw badRequest(`invalid field selector: '${selector}': invalid escape sequence in a value`);
    }
    out += next;
    i++;
  }
  return out;
}

/** Parses a field selector for a type; syntax errors and unsupported fields are 400s with kube's wording. */
export function parseFieldSelector(type: ResourceType, text: string): FieldRequirement[] {
  const requirements: FieldRequirement[] = [];
  for (const term of splitUnescaped(text, ',')) {
    if (term.length === 0) continue;
    let parsed: FieldRequirement | undefined;
    for (let i = 0; i < term.length && !parsed; i++) {
      for (const op of TERM_OPERATORS) {
        if (term.startsWith(op, i)) {
          parsed = {
            field: term.slice(0, i),
            operator: op === '!=' ? '!=' : '=',
            value: unescapeValue(term.slice(i + op.length), text),
          };
          break;
        }
      }
    }
    if (!parsed) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    if (!isSupportedField(type, parsed.field)) {
      throw badRequest(type.unsupportedField?.(parsed.field) ?? `field label not supported: ${parsed.field}`);
    }
    requirements.push(parsed);
  }
  return requirements;
}

function isSupportedField(type: ResourceType, field: string): boolean {
  return field === 'metadata.name' || field === 'metadata.namespace' || Object.hasOwn(type.fieldLabels, field);
}

export function parseLabels(text: string): LabelSelector {
  try {
    return parseLabelSelector(text);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw badRequest(`unable to parse requirement: ${err.message}`);
    throw err;
  }
}

/** The filter for a request's selectors, or undefined when it selects everything (the fast, shared path). */
export function parseObjectFilter(
  type: ResourceType,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ObjectFilter | undefined {
  const label = labelSelector ? parseLabels(labelSelector) : undefined;
  const fields = fieldSelector ? parseFieldSelector(type, fieldSelector) : [];
  const hasLabel = label !== undefined && label.requirements.length > 0;
  if (!hasLabel && fields.length === 0) return undefined;
  return { label: hasLabel ? label : undefined, fields };
}

function fieldValue(stored: StoredObject, field: string): string {
  if (field === 'metadata.name') return stored.name;
  if (field === 'metadata.namespace') return stored.namespace;
  return stored.fields[field] ?? '';
}

export function matchesFilter(filter: ObjectFilter | undefined, stored: StoredObject): boolean {
  if (!filter) return true;
  for (const requirement of filter.fields) {
    const equal = fieldValue(stored, requirement.field) === requirement.value;
    if (equal !== (requirement.operator === '=')) return false;
  }
  return filter.label === undefined || matchesLabelSelector(filter.label, stored.labels);
}

/** The single object name a field selector pins (`metadata.name=x`), which kube authorizes as that name. */
export function selectedName(fields: readonly FieldRequirement[]): string | undefined {
  const pinned = fields.filter((f) => f.field === 'metadata.name' && f.operator === '=');
  return pinned.length === 1 ? pinned[0]?.value : undefined;
}
