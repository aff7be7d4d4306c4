import { GUARD_NAME, exemptUsersOf, guardDrift, guardObjects, type GuardIdentity } from '../tenant-guard/policy.js';
import { guardDecision, guardRules, type GuardRule } from '../tenant-guard/rules.js';
import type { SandboxUser } from './identity.js';
import type { AccessAttributes } from './policy.js';
import type { KubeObject, ResourceType } from './resource-types.js';
import { base } from './type-helpers.js';
import { StatusError } from './status.js';

/**
 * Validating admission, as far as the sandbox has it: it evaluates no CEL, so of the ValidatingAdmissionPolicies stored
 * it enforces exactly one, kapi's tenant guard (src/tenant-guard), and only when the stored policy and its binding are
 * what kapi makes (the same spec, for the identity and namespace it names): then every write it covers gets the
 * guard's decision in TypeScript (tenant-guard/rules.ts, the same rules as the policy's CEL), as kube-apiserver
 * would decide it. Any other policy is stored and served but not enforced (the sandbox says so in its README).
 */

const GROUP = 'admissionregistration.k8s.io';

/** The admission types: served where kube-apiserver serves them GA (1.30 on). */
export function admissionTypes(kubernetesMinor: number): ResourceType[] {
  if (kubernetesMinor < 30) return [];
  return [
    base({
      group: GROUP,
      resource: 'validatingadmissionpolicies',
      singular: 'validatingadmissionpolicy',
      kind: 'ValidatingAdmissionPolicy',
      namespaced: false,
      subresources: ['status'],
      tracksGeneration: true,
    }),
    base({
      group: GROUP,
      resource: 'validatingadmissionpolicybindings',
      singular: 'validatingadmissionpolicybinding',
      kind: 'ValidatingAdmissionPolicyBinding',
      namespaced: false,
      tracksGeneration: true,
    }),
  ];
}

export interface AdmittedWrite {
  operation: 'CREATE' | 'UPDATE';
  type: ResourceType;
  subresource: '' | 'status';
  object: KubeObject;
  oldObject?: KubeObject;
  user: { username: string; groups: readonly string[] };
}

export interface AdmissionSources {
  /**
   * The stored policy and binding of that name (a value that changes whenever the object does), or undefined; `json`
   * reads one as JSON.
   */
  policy(name: string): object | undefined;
  binding(name: string): object | undefined;
  json(stored: object): Raw;
  /** The sandbox's authorization decision (default policy, then RBAC). */
  allowed(user: SandboxUser, attributes: AccessAttributes): boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** The identity a stored guard policy was made for, when it is exactly kapi's guard for it; undefined otherwise. */
export function guardIdentityOf(policy: Raw, binding: Raw): GuardIdentity | undefined {
  const identity = { kapiUsernames: exemptUsersOf(policy) };
  if (identity.kapiUsernames.length === 0) return undefined;
  if (guardDrift(guardObjects('v1', identity), policy, binding).length > 0) return undefined;
  return identity;
}

/** The sandbox's validating admission: kapi's tenant guard, when it is installed (see above). */
export class SandboxAdmission {
  private cache: { policy: unknown; binding: unknown; rules?: GuardRule[]; identity?: GuardIdentity } | undefined;

  constructor(private readonly sources: AdmissionSources) {}

  private guard(): { rules: GuardRule[]; identity: GuardIdentity } | undefined {
    const policy = this.sources.policy(GUARD_NAME);
    const binding = this.sources.binding(GUARD_NAME);
    if (!policy || !binding) return undefined;
    if (!this.cache || this.cache.policy !== policy || this.cache.binding !== binding) {
      const identity = guardIdentityOf(this.sources.json(policy), this.sources.json(binding));
      this.cache = { policy, binding, identity, rules: identity && guardRules() };
    }
    return this.cache.rules && this.cache.identity && { rules: this.cache.rules, identity: this.cache.identity };
  }

  /** Throws kube-apiserver's 403 Status when the guard refuses the write. */
  admit(write: AdmittedWrite): void {
    if (write.subresource !== '') return; // the guard matches main resources only
    const guard = this.guard();
    if (!guard || guard.identity.kapiUsernames.includes(write.user.username)) return;
    const decision = guardDecision(
      guard.rules,
      {
        operation: write.operation,
        group: write.type.group,
        resource: write.type.resource,
        object: write.object,
        ...(write.oldObject && { oldObject: write.oldObject }),
        user: write.user,
      },
      (check) =>
        this.sources.allowed(
          { username: write.user.username, groups: [...write.user.groups] },
          {
            verb: check.verb,
            apiGroup: check.group,
            resource: check.resource,
            subresource: check.subresource ?? '',
            name: check.name ?? '',
            namespace: '',
          },
        ),
    );
    if (decision.allowed) return;
    const name = write.object.metadata?.name ?? '';
    const resource = write.type.group ? `${write.type.resource}.${write.type.group}` : write.type.resource;
    throw new StatusError(
      403,
      'Forbidden',
      `${resource} "${name}" is forbidden: ValidatingAdmissionPolicy '${GUARD_NAME}' with binding '${GUARD_NAME}' denied request: ${decision.message}`,
      { name, group: write.type.group, kind: write.type.resource },
    );
  }
}
