import { isObjectName } from '../../../auth/kube-names.js';
import { ROLE_TEMPLATE_LABEL, rulesOf, type PolicyRule } from '../../../controllers/platform-rbac/realize.js';
import { BadRequestError, InvalidParameterError } from '../../../server/errors.js';
import { AGGREGATION_ROLES_ANNOTATION } from './role-templates.js';
import { ALIAS_ANNOTATION, DESCRIPTION_ANNOTATION } from './user-admin.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/**
 * Platform roles written over `iam.kapi.io/v1alpha2` (SPEC §17), pure: what a body asks for. As KubeSphere does, a
 * role made of templates (`iam.kapi.io/aggregation-roles`) gets its rules from them, whatever rules the body carries;
 * a role without templates takes the body's rules. Role templates themselves are not written through this API.
 */
export interface GlobalRoleRequest {
  name: string;
  /** The templates named, in order; undefined when the body names none (the rules are then the body's). */
  templates?: string[];
  rules: PolicyRule[];
  /** Annotations set (description, alias, the templates' annotation). */
  annotations: Record<string, string>;
}

const ANNOTATIONS = [DESCRIPTION_ANNOTATION, ALIAS_ANNOTATION];

export function globalRoleRequestFrom(body: unknown, urlName?: string): GlobalRoleRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('the body must be a GlobalRole object (metadata, rules)');
  const object = body as Raw;
  const name = object.metadata?.name;
  if (urlName !== undefined && name !== urlName)
    throw new BadRequestError(
      `the name of the object (${typeof name === 'string' ? name : 'none'}) does not match the name on the URL (${urlName})`,
    );
  if (typeof name !== 'string' || !isObjectName(name))
    throw new InvalidParameterError('metadata.name', 'must be a lowercase RFC 1123 name');
  if (object.metadata?.labels?.[ROLE_TEMPLATE_LABEL] !== undefined)
    throw new InvalidParameterError(
      `metadata.labels["${ROLE_TEMPLATE_LABEL}"]`,
      'role templates are not written through this API',
    );
  const given = object.metadata?.annotations ?? {};
  const annotations: Record<string, string> = {};
  for (const key of ANNOTATIONS) {
    if (typeof given[key] === 'string' && given[key] !== '') annotations[key] = given[key].slice(0, 1024);
  }
  const text = given[AGGREGATION_ROLES_ANNOTATION];
  if (text === undefined || text === null || text === '') return { name, rules: rulesOf(object), annotations };
  let templates: unknown;
  try {
    templates = JSON.parse(String(text));
  } catch {
    templates = undefined;
  }
  if (!Array.isArray(templates) || !templates.every((t) => typeof t === 'string' && isObjectName(t)))
    throw new InvalidParameterError(
      `metadata.annotations["${AGGREGATION_ROLES_ANNOTATION}"]`,
      'must be a JSON array of role template names',
    );
  const names = [...new Set(templates as string[])];
  annotations[AGGREGATION_ROLES_ANNOTATION] = JSON.stringify(names);
  return { name, templates: names, rules: [], annotations };
}

/** The rules of a role made of `templates` (each as stored): theirs, in order. */
export function aggregatedRules(templates: readonly Raw[]): PolicyRule[] {
  return templates.flatMap((template) => rulesOf(template));
}
