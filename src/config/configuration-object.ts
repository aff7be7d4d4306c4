import type { StatusCondition } from './configuration-conditions.js';

/** The parts of a ClusterConfiguration the watcher keeps: enough to parse it and to write its status. */
export interface ClusterConfigurationObject {
  metadata: { name: string; namespace?: string; uid?: string; generation?: number; resourceVersion?: string };
  spec?: unknown;
  status?: { conditions?: StatusCondition[] };
}

/** The Reflector transform: drops managedFields, annotations and the rest of the raw object. */
export function toConfigurationObject(raw: {
  metadata?: Record<string, unknown>;
  spec?: unknown;
  status?: { conditions?: unknown };
}): ClusterConfigurationObject {
  const m = raw.metadata ?? {};
  const conditions = raw.status?.conditions;
  return {
    metadata: {
      name: String(m.name ?? ''),
      namespace: typeof m.namespace === 'string' ? m.namespace : undefined,
      uid: typeof m.uid === 'string' ? m.uid : undefined,
      generation: typeof m.generation === 'number' ? m.generation : undefined,
      resourceVersion: typeof m.resourceVersion === 'string' ? m.resourceVersion : undefined,
    },
    spec: raw.spec,
    status: { conditions: Array.isArray(conditions) ? (conditions as StatusCondition[]) : undefined },
  };
}
