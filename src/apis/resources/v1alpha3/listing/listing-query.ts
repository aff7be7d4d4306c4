import { z } from 'zod';
import { matchesLabelSelector, type LabelSelector } from '../../../../kube/label-selector.js';
import type { ObjectTable } from '../../../../kube/compact/object-table.js';
import type { SlotFilter } from '../../../../kube/compact/table-views.js';
import { parseQuery } from '../../../../openapi/query-parameters.js';
import { labelSelector, listLimit, nameAndAlias } from '../label-selector-parameter.js';
import { DISPLAY_NAME_ANNOTATION } from '../node-list.js';
import { sortByValues, type KindDefinition } from '../kinds/kind-table.js';

/**
 * The listing's query (KubeSphere v1alpha3 parameters) for one kind: its schema (which the document shows, with the
 * kind's own `sortBy` and `status` values and filters), the parsed query, and the filter it compiles to over an
 * `ObjectTable`'s columns. Unknown parameters are ignored; an empty value is an absent parameter; a bad value is a
 * 400 naming the parameter (KubeSphere would empty the list or fall back silently).
 */
const selectorDescription = (over: string) =>
  `Kubernetes label selector syntax over the object’s ${over}; every object must match it.`;

export function listingQuerySchema(definition: KindDefinition) {
  const status = definition.status;
  const fields = Object.fromEntries(
    definition.fields.map((field) => [field.parameter, z.string().optional().describe(field.description)]),
  );
  return z.object({
    labelSelector: labelSelector.optional().describe(selectorDescription('labels')),
    label: labelSelector
      .optional()
      .describe('Another label selector (KubeSphere’s name); both apply when both are given.'),
    annotation: labelSelector.optional().describe(selectorDescription('annotations')),
    name: z
      .string()
      .optional()
      .describe(
        `Substring of the name or of its \`${DISPLAY_NAME_ANNOTATION}\` annotation` +
          (definition.alsoNamed ? ' (or of the kind it defines).' : '.'),
      ),
    nameAndAlias,
    names: z.array(z.string()).optional().describe('Exact names, comma-separated; any of them.'),
    alias: z.string().optional().describe(`Substring of the \`${DISPLAY_NAME_ANNOTATION}\` annotation.`),
    uid: z.string().optional().describe('The object’s metadata.uid.'),
    ...(definition.namespaced && {
      namespace: z
        .string()
        .optional()
        .describe('Exact namespace: only its objects (within those the caller may list).'),
    }),
    ownerReference: z.string().optional().describe('The uid of one of the object’s owners (metadata.ownerReferences).'),
    ownerKind: z.string().optional().describe('The kind of one of the object’s owners.'),
    ...(status && {
      status: z
        .enum(status.values as [string, ...string[]])
        .optional()
        .describe(status.description),
    }),
    ...fields,
    ...(definition.resource === 'pods' && {
      serviceName: z.string().optional().describe('A Service whose selector the pod matches, in the pod’s namespace.'),
    }),
    ...(definition.source === 'passthrough' && {
      fieldSelector: z
        .string()
        .optional()
        .describe('kube-apiserver’s field selector for the kind (`type=kubernetes.io/tls`, `metadata.name=x`).'),
    }),
    page: z.int().min(1).default(1).describe('1-based page number. A page past the end has no items.'),
    limit: listLimit,
    sortBy: z
      .enum(sortByValues(definition) as [string, ...string[]])
      .default('creationTimestamp')
      .describe(sortByDescription(definition)),
    ascending: z
      .boolean()
      .default(false)
      .describe(
        'Oldest (or first name) first; newest first by default. Go strconv.ParseBool spellings are read too, as ' +
          'KubeSphere reads them.',
      ),
  });
}

function sortByDescription(definition: KindDefinition): string {
  const own = definition.times.map((t) => `${t.sortBy.join(' or ')}: ${t.description}`);
  if (definition.sortByStatus) own.push('status: by the status text');
  return [
    'Sort key; createTime is an alias of creationTimestamp. Ties are broken by name, then namespace.',
    ...own,
  ].join(' ');
}

/** A parsed listing query. */
export interface ListingQuery {
  readonly page: number;
  readonly limit: number | undefined;
  readonly sortBy: string;
  readonly ascending: boolean;
  /** The `namespace` filter (cluster route of a namespaced kind). */
  readonly namespace: string | undefined;
  readonly filter: ListingFilter;
  readonly serviceName: string | undefined;
  readonly fieldSelector: string | undefined;
  /** The label selector texts, for asking kube-apiserver (passthrough kinds). */
  readonly labelSelectorText: string | undefined;
}

export interface ListingFilter {
  readonly name?: string;
  readonly names?: ReadonlySet<string>;
  readonly alias?: string;
  readonly uid?: string;
  readonly selectors: readonly LabelSelector[];
  readonly annotationSelectors: readonly LabelSelector[];
  readonly ownerReference?: string;
  readonly ownerKind?: string;
  /** Index into the kind's status values. */
  readonly status?: number;
  /** The kind's own filters: column index and wanted value. */
  readonly fields: readonly { readonly index: number; readonly value: string }[];
  /** Equal keys select the same objects ('' selects all): for memoizing. */
  readonly key: string;
}

const schemas = new WeakMap<KindDefinition, ReturnType<typeof listingQuerySchema>>();

export function schemaOf(definition: KindDefinition): ReturnType<typeof listingQuerySchema> {
  let schema = schemas.get(definition);
  if (!schema) schemas.set(definition, (schema = listingQuerySchema(definition)));
  return schema;
}

type Parsed = Record<string, unknown> & {
  labelSelector?: { text: string; selector: LabelSelector };
  label?: { text: string; selector: LabelSelector };
  annotation?: { text: string; selector: LabelSelector };
  name?: string;
  nameAndAlias?: string;
  names?: string[];
  alias?: string;
  uid?: string;
  namespace?: string;
  ownerReference?: string;
  ownerKind?: string;
  status?: string;
  serviceName?: string;
  fieldSelector?: string;
  page: number;
  limit?: number;
  sortBy: string;
  ascending: boolean;
};

export function parseListingQuery(definition: KindDefinition, query: Readonly<Record<string, unknown>>): ListingQuery {
  const status = definition.status;
  let input = query;
  if (status?.caseInsensitive && typeof query.status === 'string')
    input = { ...query, status: query.status.toLowerCase() };
  const p = parseQuery(schemaOf(definition), input) as Parsed;
  p.name ??= p.nameAndAlias;
  const selectorParameters = [p.labelSelector, p.label].filter((s) => s !== undefined);
  const names = p.names && p.names.length > 0 ? new Set(p.names) : undefined;
  const fields: { index: number; value: string }[] = [];
  definition.fields.forEach((field, index) => {
    const value = p[field.parameter];
    if (typeof value === 'string') fields.push({ index, value: field.caseInsensitive ? value.toLowerCase() : value });
  });
  const statusIndex = p.status !== undefined && status ? status.values.indexOf(p.status) : undefined;
  const parts = [
    p.name,
    names && [...names].sort(),
    p.alias,
    p.uid,
    selectorParameters.map((s) => s.text),
    p.annotation?.text,
    p.ownerReference,
    p.ownerKind,
    statusIndex,
    fields,
  ];
  const filtered = parts.some((part) => part !== undefined && !(Array.isArray(part) && part.length === 0));
  return {
    page: p.page,
    limit: p.limit,
    sortBy: p.sortBy,
    ascending: p.ascending,
    namespace: p.namespace,
    serviceName: p.serviceName,
    fieldSelector: p.fieldSelector,
    labelSelectorText: selectorParameters.length > 0 ? selectorParameters.map((s) => s.text).join(',') : undefined,
    filter: {
      ...(p.name !== undefined && { name: p.name }),
      ...(names && { names }),
      ...(p.alias !== undefined && { alias: p.alias }),
      ...(p.uid !== undefined && { uid: p.uid }),
      selectors: selectorParameters.map((s) => s.selector),
      annotationSelectors: p.annotation ? [p.annotation.selector] : [],
      ...(p.ownerReference !== undefined && { ownerReference: p.ownerReference }),
      ...(p.ownerKind !== undefined && { ownerKind: p.ownerKind }),
      ...(statusIndex !== undefined && { status: statusIndex }),
      fields,
      key: filtered ? JSON.stringify(parts) : '',
    },
  };
}

/**
 * The filter as a predicate over a table's columns (KubeSphere's DefaultObjectMetaFilter and the kind's own); all
 * must hold. `alsoNamed`: the column of the extra name (a CRD's kind), if the kind has one. `extra`: a further
 * condition resolved by the caller (the pods a Service selects), with its own key part.
 */
export function slotFilter(
  filter: ListingFilter,
  alsoNamed: number | undefined,
  extra?: { key: string; matches(table: ObjectTable, slot: number): boolean },
): SlotFilter | undefined {
  if (filter.key === '' && !extra) return undefined;
  const { name, names, alias, uid, selectors, annotationSelectors, ownerReference, ownerKind, status, fields } = filter;
  return {
    key: extra ? `${filter.key}|${extra.key}` : filter.key,
    matches(table, slot) {
      const objectName = table.name(slot);
      if (names !== undefined && !names.has(objectName)) return false;
      if (uid !== undefined && !table.hasUid(slot, uid)) return false;
      if (status !== undefined && table.status(slot) !== status) return false;
      if (name !== undefined && !objectName.includes(name)) {
        const display = table.annotations(slot)?.[DISPLAY_NAME_ANNOTATION];
        const other = alsoNamed === undefined ? undefined : table.field(slot, alsoNamed);
        if (!(display?.includes(name) ?? false) && !(typeof other === 'string' && other.includes(name))) return false;
      }
      if (alias !== undefined && !(table.annotations(slot)?.[DISPLAY_NAME_ANNOTATION]?.includes(alias) ?? false)) {
        return false;
      }
      for (const field of fields) {
        const value = table.field(slot, field.index);
        if (typeof value === 'string' ? value !== field.value : !value?.includes(field.value)) return false;
      }
      if (ownerReference !== undefined && !table.hasOwnerUid(slot, ownerReference)) return false;
      if (ownerKind !== undefined && !table.hasOwnerKind(slot, ownerKind)) return false;
      for (const selector of selectors) if (!matchesLabelSelector(selector, table.labels(slot))) return false;
      for (const selector of annotationSelectors) {
        if (!matchesLabelSelector(selector, table.annotations(slot))) return false;
      }
      return extra === undefined || extra.matches(table, slot);
    },
  };
}
