import { isObjectName } from '../../auth/kube-names.js';
import { BadRequestError, InvalidParameterError } from '../../server/errors.js';

/**
 * Workspaces administered over `tenant.kapi.io/v1alpha3` (SPEC §18), pure: what a request body asks for. A workspace
 * is a WorkspaceTemplate; its name is the `kapi.io/workspace` label of its namespaces (a label value: at most 63
 * characters), its manager a user. What the console edits is the description and alias annotations and the manager.
 */

export const DESCRIPTION_ANNOTATION = 'kapi.io/description';
export const ALIAS_ANNOTATION = 'kapi.io/alias-name';
const EDITABLE = [DESCRIPTION_ANNOTATION, ALIAS_ANNOTATION];
const MAX_NAME = 63;

export interface WorkspaceRequest {
  name: string;
  /** Undefined: the caller manages it. */
  manager?: string;
  annotations: Record<string, string>;
}

export interface WorkspaceEdit {
  manager?: string;
  /** Editable annotations set (a string) or removed (null). */
  annotations?: Record<string, string | null>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function managerOf(spec: Raw): string | undefined {
  const manager = spec?.template?.spec?.manager;
  if (manager === undefined || manager === null || manager === '') return undefined;
  if (typeof manager !== 'string' || !isObjectName(manager))
    throw new InvalidParameterError('spec.template.spec.manager', 'must name a user');
  return manager;
}

function annotationsOf(given: unknown, removeAbsent: boolean): Record<string, string | null> {
  if (given !== undefined && given !== null && !isObject(given))
    throw new InvalidParameterError('metadata.annotations', 'must be an object of strings');
  const out: Record<string, string | null> = {};
  for (const key of EDITABLE) {
    const value = (given as Record<string, unknown> | undefined)?.[key];
    if (typeof value === 'string' && value !== '') out[key] = value.slice(0, 1024);
    else if (removeAbsent || value === null || value === '') out[key] = null;
  }
  return out;
}

/** A workspace to create, from the console's WorkspaceTemplate. */
export function workspaceRequestFrom(body: unknown): WorkspaceRequest {
  if (!isObject(body)) throw new BadRequestError('the body must be a WorkspaceTemplate object (metadata, spec)');
  const object = body as Raw;
  const name = object.metadata?.name;
  if (typeof name !== 'string' || !isObjectName(name) || name.includes('.') || name.length > MAX_NAME)
    throw new InvalidParameterError(
      'metadata.name',
      `must be at most ${MAX_NAME} lowercase letters, digits and '-' (it is the label of its namespaces)`,
    );
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotationsOf(object.metadata?.annotations, false)))
    if (value !== null) annotations[key] = value;
  const manager = managerOf(object.spec);
  return { name, ...(manager ? { manager } : {}), annotations };
}

/**
 * A change to a workspace: the console's JSON patch (`[{op: add, path: /metadata/annotations, value}, {op: add,
 * path: /spec, value}]`, sent whatever its Content-Type says) or a merge patch naming the same fields.
 */
export function workspaceEditFrom(body: unknown): WorkspaceEdit {
  if (Array.isArray(body)) {
    const edit: WorkspaceEdit = {};
    for (const [i, operation] of body.entries()) {
      if (!isObject(operation) || (operation.op !== 'add' && operation.op !== 'replace'))
        throw new InvalidParameterError(`[${i}]`, 'must be an add or replace operation');
      if (operation.path === '/metadata/annotations') edit.annotations = annotationsOf(operation.value, true);
      else if (operation.path === '/spec') {
        const manager = managerOf(operation.value);
        if (manager) edit.manager = manager;
      } else throw new InvalidParameterError(`[${i}].path`, 'must be /metadata/annotations or /spec');
    }
    return edit;
  }
  if (!isObject(body)) throw new BadRequestError('the body must be a JSON patch or a merge patch of the workspace');
  const object = body as Raw;
  const manager = managerOf(object.spec);
  return {
    ...(manager ? { manager } : {}),
    ...(object.metadata?.annotations !== undefined
      ? { annotations: annotationsOf(object.metadata.annotations, false) }
      : {}),
  };
}

/**
 * Whether deleting a workspace deletes its namespaces: only when the caller asks, by a propagationPolicy of
 * Background or Foreground (KubeSphere 4.1's rule); none, `Orphan` or an empty body keeps them.
 */
export function deletesNamespaces(body: unknown): boolean {
  const policy = isObject(body) ? body.propagationPolicy : undefined;
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground')
    throw new InvalidParameterError('propagationPolicy', 'must be Orphan, Background or Foreground');
  return policy === 'Background' || policy === 'Foreground';
}
