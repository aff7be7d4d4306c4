import { RBAC_GROUP } from './rbac-rules.js';
import type { KubeObject, ObjectStrategy, ResourceType } from './resource-types.js';
import type { FieldError } from './status.js';
import { onlyMetadataFields } from './type-helpers.js';
import { nameProblems, pathSegmentProblems } from './validation.js';

/**
 * rbac.authorization.k8s.io/v1: ClusterRole, ClusterRoleBinding (cluster-scoped), Role, RoleBinding (namespaced),
 * with kube's v1 defaulting (roleRef and User/Group subjects get the RBAC API group) and the validation of
 * pkg/apis/rbac/validation: names are path segments, rules need verbs and either resources with API groups or
 * non-resource URLs (never in a Role), roleRef is required and immutable, subjects are User, Group or ServiceAccount.
 * Escalation prevention (creating a role or binding that grants more than the creator holds) is not modelled.
 */
type Obj = Record<string, unknown>;

function record(value: unknown): Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function count(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

function ruleErrors(rules: unknown, namespaced: boolean): FieldError[] {
  if (rules !== undefined && rules !== null && !Array.isArray(rules)) {
    return [{ type: 'Invalid', field: 'rules', value: rules, detail: 'must be a list of policy rules' }];
  }
  const errors: FieldError[] = [];
  list(rules).forEach((item, i) => {
    const rule = record(item);
    const at = `rules[${i}]`;
    if (count(rule.verbs) === 0) {
      errors.push({ type: 'Required', field: `${at}.verbs`, detail: 'verbs must contain at least one value' });
    }
    if (count(rule.nonResourceURLs) > 0) {
      if (namespaced) {
        errors.push({
          type: 'Invalid',
          field: `${at}.nonResourceURLs`,
          value: rule.nonResourceURLs,
          detail: 'namespaced rules cannot apply to non-resource URLs',
        });
      }
      if (count(rule.apiGroups) > 0 || count(rule.resources) > 0 || count(rule.resourceNames) > 0) {
        errors.push({
          type: 'Invalid',
          field: `${at}.nonResourceURLs`,
          value: rule.nonResourceURLs,
          detail: 'rules cannot apply to both regular resources and non-resource URLs',
        });
      }
      return;
    }
    if (count(rule.apiGroups) === 0) {
      errors.push({
        type: 'Required',
        field: `${at}.apiGroups`,
        detail: 'resource rules must supply at least one api group',
      });
    }
    if (count(rule.resources) === 0) {
      errors.push({
        type: 'Required',
        field: `${at}.resources`,
        detail: 'resource rules must supply at least one resource',
      });
    }
  });
  return errors;
}

function subjectErrors(subjects: unknown, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  list(subjects).forEach((item, i) => {
    const subject = record(item);
    const at = `subjects[${i}]`;
    const name = typeof subject.name === 'string' ? subject.name : '';
    const apiGroup = typeof subject.apiGroup === 'string' ? subject.apiGroup : '';
    if (!name) errors.push({ type: 'Required', field: `${at}.name` });
    switch (subject.kind) {
      case 'ServiceAccount':
        for (const problem of name ? nameProblems(name, 'subdomain') : []) {
          errors.push({ type: 'Invalid', field: `${at}.name`, value: name, detail: problem });
        }
        if (apiGroup)
          errors.push({
            type: 'NotSupported',
            field: `${at}.apiGroup`,
            value: apiGroup,
            detail: 'supported values: ""',
          });
        if (!namespaced && !subject.namespace) errors.push({ type: 'Required', field: `${at}.namespace` });
        break;
      case 'User':
      case 'Group':
        if (apiGroup !== RBAC_GROUP) {
          errors.push({
            type: 'NotSupported',
            field: `${at}.apiGroup`,
            value: apiGroup,
            detail: `supported values: "${RBAC_GROUP}"`,
          });
        }
        break;
      default:
        errors.push({
          type: 'NotSupported',
          field: `${at}.kind`,
          value: subject.kind ?? '',
          detail: 'supported values: "ServiceAccount", "User", "Group"',
        });
    }
  });
  return errors;
}

function roleRefErrors(roleRef: unknown, kinds: readonly string[]): FieldError[] {
  const ref = record(roleRef);
  const errors: FieldError[] = [];
  if (ref.apiGroup !== RBAC_GROUP) {
    errors.push({
      type: 'NotSupported',
      field: 'roleRef.apiGroup',
      value: ref.apiGroup ?? '',
      detail: `supported values: "${RBAC_GROUP}"`,
    });
  }
  if (typeof ref.kind !== 'string' || !kinds.includes(ref.kind)) {
    errors.push({
      type: 'NotSupported',
      field: 'roleRef.kind',
      value: ref.kind ?? '',
      detail: `supported values: ${kinds.map((k) => `"${k}"`).join(', ')}`,
    });
  }
  const name = typeof ref.name === 'string' ? ref.name : '';
  if (!name) errors.push({ type: 'Required', field: 'roleRef.name' });
  for (const problem of pathSegmentProblems(name)) {
    errors.push({ type: 'Invalid', field: 'roleRef.name', value: name, detail: problem });
  }
  return errors;
}

/** v1 defaulting: an empty roleRef.apiGroup and the apiGroup of User and Group subjects become the RBAC group. */
function defaultBinding(obj: KubeObject): void {
  const ref = obj.roleRef;
  if (ref !== null && typeof ref === 'object' && !Array.isArray(ref)) {
    const r = ref as Obj;
    if (!r.apiGroup) r.apiGroup = RBAC_GROUP;
  }
  for (const item of list(obj.subjects)) {
    if (item === null || typeof item !== 'object') continue;
    const subject = item as Obj;
    if (!subject.apiGroup && (subject.kind === 'User' || subject.kind === 'Group')) subject.apiGroup = RBAC_GROUP;
  }
}

function sameRoleRef(a: unknown, b: unknown): boolean {
  const x = record(a);
  const y = record(b);
  return x.apiGroup === y.apiGroup && x.kind === y.kind && x.name === y.name;
}

function roleStrategy(namespaced: boolean): ObjectStrategy {
  return {
    validate(obj) {
      const errors = ruleErrors(obj.rules, namespaced);
      const aggregation = obj.aggregationRule;
      if (!namespaced && aggregation !== undefined && aggregation !== null) {
        if (count(record(aggregation).clusterRoleSelectors) === 0) {
          errors.push({
            type: 'Required',
            field: 'aggregationRule.clusterRoleSelectors',
            detail: 'at least one clusterRoleSelector required if aggregationRule is non-nil',
          });
        }
      }
      return errors;
    },
  };
}

function bindingStrategy(namespaced: boolean): ObjectStrategy {
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  return {
    prepareForCreate: defaultBinding,
    prepareForUpdate: defaultBinding,
    validate(obj, old) {
      const errors = [...roleRefErrors(obj.roleRef, kinds), ...subjectErrors(obj.subjects, namespaced)];
      if (old && !sameRoleRef(obj.roleRef, old.roleRef)) {
        errors.push({ type: 'Invalid', field: 'roleRef', value: obj.roleRef, detail: 'cannot change roleRef' });
      }
      return errors;
    },
  };
}

function rbacType(resource: string, kind: string, namespaced: boolean, strategy: ObjectStrategy): ResourceType {
  return {
    group: RBAC_GROUP,
    versions: ['v1'],
    resource,
    singular: resource.replace(/s$/, ''),
    kind,
    listKind: `${kind}List`,
    namespaced,
    // kube gives the RBAC kinds no short names or categories.
    shortNames: [],
    categories: [],
    subresources: [],
    fieldLabels: {},
    unsupportedField: onlyMetadataFields,
    builtin: true,
    tracksGeneration: false,
    returnsDeletedObject: false,
    nameRule: 'pathSegment',
    strategy,
  };
}

export function rbacTypes(): ResourceType[] {
  return [
    rbacType('clusterroles', 'ClusterRole', false, roleStrategy(false)),
    rbacType('clusterrolebindings', 'ClusterRoleBinding', false, bindingStrategy(false)),
    rbacType('roles', 'Role', true, roleStrategy(true)),
    rbacType('rolebindings', 'RoleBinding', true, bindingStrategy(true)),
  ];
}
