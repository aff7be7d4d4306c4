/**
 * Where Fluent Bit's Kubernetes filter puts things in each document, as KubeSphere installs it (index
 * `ks-logstash-log-YYYY.MM.DD`, time key `time`). Exact matches use the `.keyword` sub-field of dynamic mappings.
 */
export interface SearchFields {
  time: string;
  log: string;
  namespace: string;
  pod: string;
  container: string;
  /** The container's id: distinct values count containers. */
  containerId: string;
}

export const FLUENT_BIT_FIELDS: Readonly<SearchFields> = Object.freeze({
  time: 'time',
  log: 'log',
  namespace: 'kubernetes.namespace_name',
  pod: 'kubernetes.pod_name',
  container: 'kubernetes.container_name',
  containerId: 'kubernetes.docker_id',
});

export function searchFields(overrides: Readonly<Record<string, string>>): SearchFields {
  return { ...FLUENT_BIT_FIELDS, ...overrides };
}

export const keyword = (field: string): string => `${field}.keyword`;

/** A dotted field of a document's `_source` (`kubernetes.pod_name`), nested or flat. */
export function sourceField(source: unknown, field: string): string | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  const flat = (source as Record<string, unknown>)[field];
  if (flat !== undefined) return typeof flat === 'string' ? flat : String(flat);
  let value: unknown = source;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value === undefined || value === null ? undefined : typeof value === 'string' ? value : String(value);
}
