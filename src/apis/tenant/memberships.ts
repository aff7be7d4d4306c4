import type { Authorizer, ResourceAttributes, UserInfo } from '../../auth/identity.js';
import {
  NAMESPACE_ROLES,
  TENANT_GROUP,
  USER_REF_LABEL,
  WORKSPACE_LABEL,
  baseOf,
  namespaceRoleClusterRole,
  type NamespaceRole,
  type WorkspaceRoleBase,
} from '../../controllers/platform-rbac/workspaces.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const kind = (resource: string) => KINDS_BY_RESOURCE.get(resource) as KindDefinition;
const templates = kind('workspacetemplates');
const workspaceBindings = kind('workspacerolebindings');
const roleBindings = kind('rolebindings');

/** The manager of a workspace as stored (`spec.template.spec.manager`), or undefined. */
export function managerOf(template: Raw): string | undefined {
  const manager = template?.spec?.template?.spec?.manager;
  return typeof manager === 'string' && manager !== '' ? manager : undefined;
}

/** The project role a member RoleBinding gives (`kapi:namespace-role:<role>`), or undefined for any other binding. */
export function namespaceRoleOf(binding: Raw): NamespaceRole | undefined {
  if (binding?.roleRef?.kind !== 'ClusterRole') return undefined;
  return NAMESPACE_ROLES.find((role) => namespaceRoleClusterRole(role) === binding.roleRef.name);
}

/**
 * Who belongs to which workspace and project, read from the listing's watched caches (WorkspaceTemplates, their
 * WorkspaceRoleBindings and the projects' member RoleBindings), so answers come from memory. Which rights a member
 * has is never decided here: that is the cluster's RBAC (kapi's controller realizes memberships there).
 */
export class TenantMemberships {
  constructor(private readonly listing: ResourceListing) {}

  /** The template of a workspace, parsed; undefined when there is none. */
  async workspace(name: string): Promise<Raw | undefined> {
    const stored = await this.listing.readCached(templates, undefined, name);
    return stored && JSON.parse(stored.toString('utf8'));
  }

  /** The workspaces `user` (by name or one of its groups) is a member of: managed, or bound in. */
  async workspacesOf(user: UserInfo): Promise<Set<string>> {
    const subjects = new Set([`User:${user.username}`, ...user.groups.map((group) => `Group:${group}`)]);
    const names = await this.listing.cachedNamesWithField(templates, 'manager', user.username);
    for (const binding of (await this.listing.cachedWithField(workspaceBindings, 'subject', subjects)) as Raw[]) {
      const workspace = binding?.metadata?.labels?.[WORKSPACE_LABEL];
      if (typeof workspace === 'string' && (await this.listing.readCached(templates, undefined, workspace)))
        names.add(workspace);
    }
    return names;
  }

  /** Each user member of a workspace with its role: its manager `admin`, the others by their bindings (oldest first). */
  async membersOf(workspace: string): Promise<Map<string, WorkspaceRoleBase>> {
    const members = new Map<string, WorkspaceRoleBase>();
    const template = await this.workspace(workspace);
    if (!template) return members;
    const manager = managerOf(template);
    if (manager) members.set(manager, 'admin');
    const bindings = (await this.listing.cachedWithField(
      workspaceBindings,
      'workspace',
      new Set([workspace]),
    )) as Raw[];
    bindings.sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
    for (const binding of bindings) {
      const base = baseOf(workspace, String(binding?.roleRef?.name ?? ''));
      if (!base) continue;
      for (const subject of Array.isArray(binding.subjects) ? binding.subjects : []) {
        if (subject?.kind === 'User' && typeof subject.name === 'string' && !members.has(subject.name))
          members.set(subject.name, base);
      }
    }
    return members;
  }

  /** The WorkspaceRoleBindings kapi wrote for `user` in `workspace` (labelled with both). */
  async bindingsOf(workspace: string, user: string): Promise<Raw[]> {
    const bindings = (await this.listing.cachedWithField(
      workspaceBindings,
      'workspace',
      new Set([workspace]),
    )) as Raw[];
    return bindings.filter((binding) => binding?.metadata?.labels?.[USER_REF_LABEL] === user);
  }

  /** Each user member of a project with its role, from its member RoleBindings (labelled with their user). */
  async projectMembersOf(namespace: string): Promise<Map<string, NamespaceRole>> {
    const bindings = (await this.listing.cachedWhere(
      roleBindings,
      (labels) => labels?.[USER_REF_LABEL] !== undefined,
      namespace,
    )) as Raw[];
    bindings.sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
    const members = new Map<string, NamespaceRole>();
    for (const binding of bindings) {
      const role = namespaceRoleOf(binding);
      const user = binding.metadata.labels[USER_REF_LABEL] as string;
      if (role && !members.has(user)) members.set(user, role);
    }
    return members;
  }

  /** The member RoleBindings of `user` in a project. */
  async projectBindingsOf(namespace: string, user: string): Promise<Raw[]> {
    return (await this.listing.cachedWhere(
      roleBindings,
      (labels) => labels?.[USER_REF_LABEL] === user,
      namespace,
    )) as Raw[];
  }

  /**
   * A workspace's projects `caller` may see, of those `inWorkspace` names: all of them for one who may list the
   * workspace's projects (or every namespace), else those the caller is a member of.
   */
  async visibleProjects(
    authorizer: Authorizer,
    caller: UserInfo,
    workspace: string,
    inWorkspace: readonly string[],
  ): Promise<{ names: string[]; everything: boolean }> {
    const may = async (attributes: ResourceAttributes) => (await authorizer.authorize(caller, attributes)).allowed;
    const everything =
      (await may({
        verb: 'list',
        group: TENANT_GROUP,
        resource: 'workspacetemplates',
        subresource: 'namespaces',
        name: workspace,
        fresh: true,
      })) || (await may({ verb: 'list', resource: 'namespaces' }));
    if (everything) return { names: [...inWorkspace], everything };
    const own = await this.projectsOf(caller.username);
    return { names: inWorkspace.filter((name) => own.has(name)), everything };
  }

  /** The projects where `user` is a member (a RoleBinding labelled with its name). */
  async projectsOf(user: string): Promise<Set<string>> {
    const bindings = (await this.listing.cachedWhere(
      roleBindings,
      (labels) => labels?.[USER_REF_LABEL] === user,
    )) as Raw[];
    return new Set(bindings.map((binding) => String(binding.metadata?.namespace)));
  }
}
