import type { SandboxUser } from './identity.js';
import type { AccessAttributes, Authorizer, PolicyDecision, RuleSet } from './policy.js';

/**
 * kube-apiserver's union authorizer: the first source that allows decides; none allowing is a denial. The sandbox
 * chains its default policy (bootstrap roles, the chart's bindings, rules tests add with `policy.allow`) and the RBAC
 * objects in the store. Every request, impersonation check and review goes through this one `decide`.
 */
export class UnionAuthorizer implements Authorizer {
  constructor(private readonly sources: readonly Authorizer[]) {}

  decide(user: SandboxUser, attributes: AccessAttributes): PolicyDecision {
    for (const source of this.sources) {
      const decision = source.decide(user, attributes);
      if (decision.allowed) return decision;
    }
    return { allowed: false, reason: '' };
  }

  rulesFor(user: SandboxUser, namespace: string): RuleSet {
    const union: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationErrors: [] };
    for (const source of this.sources) {
      const set = source.rulesFor(user, namespace);
      union.resourceRules.push(...set.resourceRules);
      union.nonResourceRules.push(...set.nonResourceRules);
      union.incomplete ||= set.incomplete;
      union.evaluationErrors.push(...set.evaluationErrors);
    }
    return union;
  }
}
