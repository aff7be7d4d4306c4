import type { SandboxUser } from './identity.js';
import type { AccessAttributes, Authorizer, PolicyDecision, RuleSet } from './policy.js';
import { RbacIndex, type BindingObject, type RbacObjects, type RoleObject } from './rbac-index.js';
import { RBAC_GROUP } from './rbac-rules.js';
import type { ResourceRegistry } from './resource-types.js';
import type { ObjectStore } from './store.js';
import { parseStored } from './stored-object.js';

/**
 * Authorization by the RBAC objects in the store. The compiled index is rebuilt lazily, on the first decision after
 * an RBAC object changed (any write to the rbac.authorization.k8s.io group bumps `revision`, synchronously with the
 * commit), so a new or deleted binding counts from the very next request and unchanged objects cost nothing.
 */
export class RbacAuthorizer implements Authorizer {
  private revisionValue = 0;
  private compiled: { revision: number; index: RbacIndex } | undefined;

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly store: ObjectStore,
  ) {
    store.onEvent((event) => {
      if (event.resourceType.group === RBAC_GROUP) this.revisionValue++;
    });
  }

  /** Changes seen to RBAC objects; objects loaded without events (seeding) must call `invalidate`. */
  get revision(): number {
    return this.revisionValue;
  }

  invalidate(): void {
    this.revisionValue++;
  }

  /** The index for the current RBAC objects, compiled when they changed since the last one. */
  get index(): RbacIndex {
    if (this.compiled?.revision !== this.revisionValue) {
      this.compiled = { revision: this.revisionValue, index: RbacIndex.compile(this.read()) };
    }
    return this.compiled.index;
  }

  decide(user: SandboxUser, attributes: AccessAttributes): PolicyDecision {
    return this.index.decide(user, attributes);
  }

  rulesFor(user: SandboxUser, namespace: string): RuleSet {
    return this.index.rulesFor(user, namespace);
  }

  private read(): RbacObjects {
    const all = <T>(resource: string): T[] => {
      const type = this.registry.byGroupResource(RBAC_GROUP, resource);
      if (!type) return [];
      const collection = this.store.collection(type);
      // Key order, so that which binding a reason names does not depend on write order.
      return collection.sortedKeys().map((key) => parseStored(type, collection.get(key)!) as T);
    };
    return {
      clusterRoles: all<RoleObject>('clusterroles'),
      roles: all<RoleObject>('roles'),
      clusterRoleBindings: all<BindingObject>('clusterrolebindings'),
      roleBindings: all<BindingObject>('rolebindings'),
    };
  }
}
