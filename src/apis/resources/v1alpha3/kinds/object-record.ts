import type { Labels, ObjectRecord, OwnerRef, TableShape } from '../../../../kube/compact/object-table.js';
import { DISPLAY_NAME_ANNOTATION } from '../node-list.js';
import { apiVersionOf, type KindDefinition } from './kind-table.js';

/**
 * One raw object (as a list or a watch event gives it) read into what the listing keeps: the columns its filters
 * and sorts need, and its body as answered — kind and apiVersion filled in (list items lack them) and
 * `metadata.managedFields` dropped (often the largest part of an object, and never answered), the rest verbatim.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const stringify = JSON.stringify;

function labelsOf(value: unknown): Labels | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Labels) : undefined;
}

function ownersOf(value: unknown): OwnerRef[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const owners: OwnerRef[] = [];
  for (const ref of value as { kind?: unknown; uid?: unknown }[]) {
    owners.push({
      kind: typeof ref?.kind === 'string' ? ref.kind : '',
      uid: typeof ref?.uid === 'string' ? ref.uid : '',
    });
  }
  return owners;
}

/** The type header of every body of a kind: `{"kind":"Pod","apiVersion":"v1",`. */
export function bodyHeader(definition: KindDefinition): string {
  return `{"kind":${stringify(definition.kind)},"apiVersion":${stringify(apiVersionOf(definition))},`;
}

export function objectBody(header: string, raw: Raw): Buffer {
  const { kind: _kind, apiVersion: _apiVersion, metadata, ...rest } = raw as Record<string, unknown>;
  let shown = metadata;
  if (metadata && typeof metadata === 'object' && 'managedFields' in metadata) {
    const { managedFields: _dropped, ...kept } = metadata as Record<string, unknown>;
    shown = kept;
  }
  const json = stringify({ metadata: shown, ...rest });
  return Buffer.from(json.length > 2 ? header + json.slice(1) : `${header.slice(0, -1)}}`);
}

/** Reads a raw object of `definition`'s kind; `header` is `bodyHeader(definition)`, made once. */
export function objectRecord(definition: KindDefinition, header: string, raw: Raw): ObjectRecord {
  if (definition.answered) raw = definition.answered(raw);
  const metadata = raw?.metadata ?? {};
  return {
    name: String(metadata.name ?? ''),
    namespace: definition.namespaced ? String(metadata.namespace ?? '') : '',
    uid: String(metadata.uid ?? ''),
    created: typeof metadata.creationTimestamp === 'string' ? Date.parse(metadata.creationTimestamp) : Number.NaN,
    resourceVersion: String(metadata.resourceVersion ?? ''),
    labels: labelsOf(metadata.labels),
    annotations: labelsOf(metadata.annotations),
    owners: ownersOf(metadata.ownerReferences),
    status: definition.status ? definition.status.of(raw) : -1,
    times: definition.times.map((t) => t.of(raw)),
    fields: [
      ...definition.fields.map((f) => {
        const value = f.of(raw);
        // kept folded, so the query's value (folded too) matches it in any case
        return f.caseInsensitive && typeof value === 'string' ? value.toLowerCase() : value;
      }),
      ...(definition.alsoNamed ? [definition.alsoNamed(raw)] : []),
    ],
    body: objectBody(header, raw),
  };
}

/**
 * The table shape of a kind: its times, its fields (and the extra name a CRD is also known by, last), and the
 * display-name annotation kept whatever its length (`name` and `alias` search it by substring).
 */
export function tableShape(definition: KindDefinition): TableShape {
  return {
    times: definition.times.length,
    fields: definition.fields.length + (definition.alsoNamed ? 1 : 0),
    verbatimAnnotations: [DISPLAY_NAME_ANNOTATION],
  };
}
