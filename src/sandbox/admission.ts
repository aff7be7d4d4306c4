import {
  GUARD_NAME,
  exemptUsersOf,
  guardDrift,
  guardMessage,
  guardObjects,
  hasAuthorizer,
  type GuardApiVersion,
  type GuardIdentity,
} from '../tenant-guard/policy.js';
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

/**
 * The admission types at the version the release serves them: v1 from 1.30; on 1.28-1.29 v1beta1 and on 1.26-1.27
 * v1alpha1, as a cluster started with the ValidatingAdmissionPolicy feature gate and API on (as `make e2e-real` starts
 * its 1.26 kit).
 */
export function admissionTypes(kubernetesMinor: number): ResourceType[] {
  const versions = [kubernetesMinor >= 30 ? 'v1' : kubernetesMinor >= 28 ? 'v1beta1' : 'v1alpha1'];
  return [
    base({
      group: GROUP,
      versions,
      resource: 'validatingadmissionpolicies',
      singular: 'validatingadmissionpolicy',
      kind: 'ValidatingAdmissionPolicy',
      namespaced: false,
      subresources: ['status'],
      tracksGeneration: true,
    }),
    // webhooks: v1 on every release kapi supports (the sandbox calls them: webhooks.ts)
    base({
      group: GROUP,
      versions: ['v1'],
      resource: 'validatingwebhookconfigurations',
      singular: 'validatingwebhookconfiguration',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
      tracksGeneration: true,
    }),
    base({
      group: GROUP,
      versions,
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
  /** The version the policies are stored at (the one the release serves). */
  version: GuardApiVersion;
  /** The sandbox's authorization decision (default policy, then RBAC). */
  allowed(user: SandboxUser, attributes: AccessAttributes): boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** The identity a stored guard policy was made for, when it is exactly kapi's guard for it; undefined otherwise. */
export function guardIdentityOf(policy: Raw, binding: Raw, version: GuardApiVersion): GuardIdentity | undefined {
  const identity = { kapiUsernames: exemptUsersOf(policy) };
  if (identity.kapiUsernames.length === 0) return undefined;
  if (guardDrift(guardObjects(version, identity), policy, binding).length > 0) return undefined;
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
      const identity = guardIdentityOf(this.sources.json(policy), this.sources.json(binding), this.sources.version);
      this.cache = { policy, binding, identity, rules: identity && guardRules() };
    }
    return this.cache.rules && this.cache.identity && { rules: this.cache.rules, identity: this.cache.identity };
  }

  /** Throws kube-apiserver's 403 Status when the guard refuses the write. */
  admit(write: AdmittedWrite): void {
    const guard = this.guard();
    if (!guard || guard.identity.kapiUsernames.includes(write.user.username)) return;
    // without an authorizer (v1alpha1), system:masters is the only other writer the policy lets through
    const strict = !hasAuthorizer(this.sources.version);
    if (strict && write.user.groups.includes('system:masters')) return;
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
        !strict &&
        this.sources.allowed(
          { username: write.user.username, groups: [...write.user.groups] },
          {
            verb: check.verb,
            apiGroup: check.group,
            resource: check.resource,
            subresource: check.subresource ?? '',
            name: check.name ?? '',
            namespace: check.namespace ?? '',
          },
        ),
      (rule) => guardMessage(rule, this.sources.version),
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
