import type { ReadinessCheck } from '../../../kube/caches.js';
import type { KubeClient } from '../../../kube/client.js';
import { Reflector } from '../../../kube/reflector.js';
import type { Logger } from '../../../observability/logger.js';
import { roleBindingRecordFrom, roleOfUser, templatesOf, type RoleBindingRecord } from './role-templates.js';

/** A GlobalRole as answered (list items lack kind and apiVersion; managedFields are never answered). */
export interface GlobalRoleObject {
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  /** The object as answered. */
  readonly body: Readonly<Record<string, unknown>>;
}

export const GLOBAL_ROLES_PATH = '/apis/iam.kapi.io/v1alpha2/globalroles';
export const GLOBAL_ROLE_BINDINGS_PATH = '/apis/iam.kapi.io/v1alpha2/globalrolebindings';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function globalRoleFrom(raw: any): GlobalRoleObject {
  const { managedFields: _dropped, ...metadata } = raw?.metadata ?? {};
  const annotations = metadata.annotations;
  return {
    name: String(metadata.name ?? ''),
    annotations:
      annotations && typeof annotations === 'object' ? (annotations as Record<string, string>) : ({} as const),
    body: { ...raw, apiVersion: 'iam.kapi.io/v1alpha2', kind: 'GlobalRole', metadata },
  };
}

/**
 * The platform roles and who holds them, from two watched collections: GlobalRoles (few: the built-in roles, their
 * templates and the operators' own) and GlobalRoleBindings (about one per user), indexed by user so a page load's
 * "which role does this user hold" costs no scan.
 */
export class GlobalRoleDirectory {
  private readonly roles: Reflector<GlobalRoleObject>;
  private readonly bindings: Reflector<RoleBindingRecord>;
  /** Binding names by User subject. */
  private readonly byUser = new Map<string, Set<string>>();

  constructor(client: KubeClient, logger: Logger) {
    this.roles = new Reflector({
      client,
      logger,
      name: 'globalroles',
      listPath: GLOBAL_ROLES_PATH,
      transform: globalRoleFrom,
    });
    this.bindings = new Reflector({
      client,
      logger,
      name: 'globalrolebindings',
      listPath: GLOBAL_ROLE_BINDINGS_PATH,
      transform: roleBindingRecordFrom,
    });
    this.bindings.on('added', (binding) => this.index(binding));
    this.bindings.on('modified', (binding, old) => {
      if (old) this.unindex(old);
      this.index(binding);
    });
    this.bindings.on('deleted', (binding) => this.unindex(binding));
  }

  /** The watch of GlobalRoles, for the listing of global roles to attach to. */
  get rolesWatch(): Reflector<unknown> {
    return this.roles as Reflector<unknown>;
  }

  get readiness(): ReadinessCheck[] {
    return [this.roles.readiness, this.bindings.readiness];
  }

  start(): void {
    this.roles.start();
    this.bindings.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.roles.stop(), this.bindings.stop()]);
  }

  role(name: string): GlobalRoleObject | undefined {
    return this.roles.get(name);
  }

  /** The name of the user's platform role; undefined when no binding names the user (or its role is gone). */
  roleOf(username: string): string | undefined {
    const names = this.byUser.get(username);
    if (!names) return undefined;
    const bindings = [...names].flatMap((name) => this.bindings.get(name) ?? []);
    return roleOfUser(
      bindings.filter((b) => b.roleKind === 'GlobalRole'),
      username,
      (role) => this.roles.get(role) !== undefined,
    );
  }

  /** The users whose platform role is `role` (a scan of the bindings: asked for by a filter, not per page load). */
  holdersOf(role: string): Set<string> {
    const holders = new Set<string>();
    for (const user of this.byUser.keys()) if (this.roleOf(user) === role) holders.add(user);
    return holders;
  }

  /** The role templates of the user's platform role, as the console draws its menus from them. */
  templatesOfUser(username: string): GlobalRoleObject[] {
    const role = this.roleOf(username);
    return role ? templatesOf(this.roles.get(role), (name) => this.roles.get(name)) : [];
  }

  private index(binding: RoleBindingRecord): void {
    for (const user of binding.users) {
      let names = this.byUser.get(user);
      if (!names) this.byUser.set(user, (names = new Set()));
      names.add(binding.name);
    }
  }

  private unindex(binding: RoleBindingRecord): void {
    for (const user of binding.users) {
      const names = this.byUser.get(user);
      names?.delete(binding.name);
      if (names?.size === 0) this.byUser.delete(user);
    }
  }
}
