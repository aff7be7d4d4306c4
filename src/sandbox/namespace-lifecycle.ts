import { randomUUID } from 'node:crypto';
import { nowTimestamp, type TypeLifecycle } from './registry-store.js';
import type { ResourceRegistry } from './resource-types.js';
import { forbidden } from './status.js';
import type { ObjectStore } from './store.js';
import { parseStored } from './stored-object.js';

/**
 * What kube's namespace controllers do, done at once: a new namespace gets its `default` ServiceAccount; deleting a
 * namespace marks it Terminating, deletes everything in it, then removes it. The system namespaces cannot be deleted.
 */
const PROTECTED = new Set(['default', 'kube-system', 'kube-public']);

export function namespaceLifecycle(deps: { registry: ResourceRegistry; store: ObjectStore }): TypeLifecycle {
  return {
    afterCreate(_type, stored) {
      const serviceAccounts = deps.registry.byGroupResource('', 'serviceaccounts');
      if (!serviceAccounts) return;
      deps.store.create(serviceAccounts, {
        metadata: { name: 'default', namespace: stored.name, uid: randomUUID(), creationTimestamp: nowTimestamp() },
      });
    },
    beforeDelete(type, stored) {
      if (PROTECTED.has(stored.name)) {
        throw forbidden({ group: '', resource: 'namespaces' }, stored.name, 'this namespace may not be deleted');
      }
      const terminating = parseStored(type, stored);
      terminating.metadata.deletionTimestamp ??= nowTimestamp();
      terminating.metadata.deletionGracePeriodSeconds ??= 0;
      terminating.status = { phase: 'Terminating' };
      deps.store.replace(type, terminating, stored);
      for (const resourceType of deps.registry.all()) {
        if (!resourceType.namespaced) continue;
        const collection = deps.store.collection(resourceType);
        const prefix = `${stored.name}/`;
        const keys = collection.sortedKeys().filter((key) => key.startsWith(prefix));
        for (const key of keys) {
          const object = collection.get(key);
          if (object) deps.store.remove(resourceType, object);
        }
      }
    },
  };
}
