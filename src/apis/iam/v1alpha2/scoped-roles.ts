import {
  NAMESPACE_ROLES as PROJECT_ROLE_NAMES,
  WORKSPACE_LABEL,
  WORKSPACE_ROLE_BASES,
  workspaceRoleName,
  type NamespaceRole,
  type WorkspaceRoleBase,
} from '../../../controllers/platform-rbac/workspaces.js';
import { aggregatedRoleNames } from './role-templates.js';
import { NAMESPACE_ROLES, WORKSPACE_ROLES, type RoleMetadata } from './scoped-role-data.js';

/**
 * The workspace roles and project roles as the console reads them (pure): every workspace has `<ws>-admin`,
 * `<ws>-regular`, `<ws>-viewer` and `<ws>-self-provisioner`, every project `admin`, `operator` and `viewer`, each
 * aggregated from role templates whose `iam.kapi.io/role-template-rules` open the console's menus. They are kapi's
 * built-ins (KubeSphere 3.4.1's), answered from its table rather than stored per workspace and project; what they
 * allow is realized in RBAC by the controller.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const IAM_VERSION = 'iam.kapi.io/v1alpha2';
const RBAC_VERSION = 'rbac.authorization.k8s.io/v1';
const ROLE_TEMPLATE_LABEL = 'iam.kapi.io/role-template';

const baseMetadata = (roles: readonly RoleMetadata[], name: string) =>
  roles.find((role) => role.name === name) as RoleMetadata;

/** The workspace roles of `workspace`, made when it was (`created`). */
export function workspaceRoles(workspace: string, created?: string): Raw[] {
  return WORKSPACE_ROLE_BASES.map((base) => workspaceRole(workspace, base, created));
}

export function workspaceRole(workspace: string, base: WorkspaceRoleBase, created?: string): Raw {
  const metadata = baseMetadata(WORKSPACE_ROLES.roles, base);
  return {
    apiVersion: IAM_VERSION,
    kind: 'WorkspaceRole',
    metadata: {
      name: workspaceRoleName(workspace, base),
      labels: { [WORKSPACE_LABEL]: workspace },
      annotations: { ...metadata.annotations },
      ...(created && { creationTimestamp: created }),
    },
    rules: [],
  };
}

const workspaceTemplate = (metadata: RoleMetadata): Raw => ({
  apiVersion: IAM_VERSION,
  kind: 'WorkspaceRole',
  metadata: { ...metadata },
  rules: [],
});

/** The workspace role templates (the console's role editor and menus). */
export const workspaceRoleTemplates = (): Raw[] => WORKSPACE_ROLES.templates.map(workspaceTemplate);

/** The templates a workspace role is aggregated from, in its annotation's order (missing ones skipped). */
export function templatesOfWorkspaceRole(base: WorkspaceRoleBase): Raw[] {
  const names = aggregatedRoleNames(baseMetadata(WORKSPACE_ROLES.roles, base).annotations);
  return names.flatMap((name) => {
    const found = WORKSPACE_ROLES.templates.find((template) => template.name === name);
    return found ? [workspaceTemplate(found)] : [];
  });
}

/** The project roles of `namespace`. */
export function namespaceRoles(namespace: string, created?: string): Raw[] {
  return PROJECT_ROLE_NAMES.map((role) => ({
    apiVersion: RBAC_VERSION,
    kind: 'Role',
    metadata: {
      name: role,
      namespace,
      annotations: { ...baseMetadata(NAMESPACE_ROLES.roles, role).annotations },
      ...(created && { creationTimestamp: created }),
    },
    rules: [],
  }));
}

const namespaceTemplate = (namespace: string, metadata: RoleMetadata): Raw => ({
  apiVersion: RBAC_VERSION,
  kind: 'Role',
  metadata: { ...metadata, namespace },
  rules: [],
});

export const namespaceRoleTemplates = (namespace: string): Raw[] =>
  NAMESPACE_ROLES.templates.map((template) => namespaceTemplate(namespace, template));

export function templatesOfNamespaceRole(namespace: string, role: NamespaceRole): Raw[] {
  const names = aggregatedRoleNames(baseMetadata(NAMESPACE_ROLES.roles, role).annotations);
  return names.flatMap((name) => {
    const found = NAMESPACE_ROLES.templates.find((template) => template.name === name);
    return found ? [namespaceTemplate(namespace, found)] : [];
  });
}

/** Whether a query asks for role templates (KubeSphere: `label=iam.kapi.io/role-template=true`, or a selector of it). */
export function asksForTemplates(query: Readonly<Record<string, unknown>>): boolean {
  const label = typeof query.label === 'string' ? query.label : '';
  const selector = typeof query.labelSelector === 'string' ? query.labelSelector : '';
  return label.startsWith(ROLE_TEMPLATE_LABEL) || selector.includes(ROLE_TEMPLATE_LABEL);
}

const matchesPair = (values: Readonly<Record<string, string>> | undefined, wanted: string) => {
  const at = wanted.indexOf('=');
  if (at < 0) return values?.[wanted] !== undefined;
  return values?.[wanted.slice(0, at)] === wanted.slice(at + 1);
};

/**
 * A page of a few built-in roles with KubeSphere's list parameters (`name` contains, `label` and `annotation` as `key`
 * or `key=value`, `limit`, `page`); their order is the table's.
 */
export function rolePage(roles: readonly Raw[], query: Readonly<Record<string, unknown>>) {
  const text = (key: string) => (typeof query[key] === 'string' ? (query[key] as string) : '');
  const matching = roles.filter(
    (role) =>
      (!text('name') || String(role.metadata.name).includes(text('name'))) &&
      (!text('label') || matchesPair(role.metadata.labels, text('label'))) &&
      (!text('annotation') || matchesPair(role.metadata.annotations, text('annotation'))),
  );
  const limit = Number.parseInt(text('limit'), 10);
  const page = Math.max(1, Number.parseInt(text('page'), 10) || 1);
  const items = limit > 0 ? matching.slice((page - 1) * limit, page * limit) : matching;
  return { items, totalItems: matching.length };
}
