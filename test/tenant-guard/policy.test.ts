import { describe, expect, it } from '@jest/globals';
import { exemptUsersOf, guardDrift, guardObjects } from '../../src/tenant-guard/policy.js';
import { servedGuardVersion, tokenSubject } from '../../src/tenant-guard/guard-keeper.js';
import { guardFileText, USERNAME_PLACEHOLDER } from '../../src/tenant-guard/chart-files.js';

const identity = { kapiUsernames: ['system:serviceaccount:kapi-system:kapi-apiserver'] };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;
const clone = <T>(value: T): T => structuredClone(value);

describe('the tenant guard as a ValidatingAdmissionPolicy', () => {
  it('when made for a cluster with CEL’s authorizer, then kapi’s own writes are not evaluated and every validation is “untouched or allowed”', () => {
    const { policy, binding } = guardObjects('v1', identity);
    const spec = policy.spec as Raw;
    expect(spec.failurePolicy).toBe('Fail');
    expect(spec.matchConditions).toEqual([
      {
        name: 'not-kapi',
        expression: "!(request.userInfo.username in ['system:serviceaccount:kapi-system:kapi-apiserver'])",
      },
    ]);
    expect(exemptUsersOf(policy)).toEqual(['system:serviceaccount:kapi-system:kapi-apiserver']);
    for (const validation of spec.validations) {
      expect(validation.expression).toMatch(
        /^!\(request\.resource\.group == '[^']*' && request\.resource\.resource == '[a-z]+'\) \|\| !\(/,
      );
      expect(validation.reason).toBe('Forbidden');
    }
    expect((binding.spec as Raw).validationActions).toEqual(['Deny']);
  });

  it('when made for v1alpha1 (no authorizer), then only kapi and system:masters pass, and the message says to use kapi’s API', () => {
    const spec = guardObjects('v1alpha1', identity).policy.spec as Raw;
    expect(spec.matchConditions).toBeUndefined();
    for (const validation of spec.validations) {
      expect(validation.expression).not.toContain('authorizer');
      expect(validation.expression).toContain(
        "request.userInfo.username in ['system:serviceaccount:kapi-system:kapi-apiserver']",
      );
      expect(validation.message).toContain('use kapi');
    }
    expect((guardObjects('v1alpha1', identity).binding.spec as Raw).validationActions).toBeUndefined();
  });

  it('when several users are exempt (replicas with other credentials), then each is listed once, sorted, quotes escaped', () => {
    const { policy } = guardObjects('v1', { kapiUsernames: ['zed', "o'neil\\x", 'zed'] });
    expect((policy.spec as Raw).matchConditions[0].expression).toBe(
      "!(request.userInfo.username in ['o\\'neil\\\\x', 'zed'])",
    );
    expect(exemptUsersOf(policy)).toEqual(["o'neil\\x", 'zed']);
    expect(exemptUsersOf({ metadata: { annotations: { 'tenant.kapi.io/exempt-users': 'not json' } } })).toEqual([]);
  });

  describe('guardDrift', () => {
    const expected = guardObjects('v1', identity);
    // as kube-apiserver answers them: what kapi set, and the defaults it adds
    const stored = () => {
      const policy = clone(expected.policy) as Raw;
      policy.spec.matchConstraints.namespaceSelector = {};
      policy.spec.matchConstraints.objectSelector = {};
      policy.metadata.resourceVersion = '7';
      return { policy, binding: clone(expected.binding) as Raw };
    };

    it('when the cluster holds kapi’s policy with kube-apiserver’s defaults, then there is no drift', () => {
      const { policy, binding } = stored();
      expect(guardDrift(expected, policy, binding)).toEqual([]);
    });

    it.each([
      ['the policy is missing', () => ({ ...stored(), policy: undefined }), 'the ValidatingAdmissionPolicy is missing'],
      [
        'the binding is missing',
        () => ({ ...stored(), binding: undefined }),
        'the ValidatingAdmissionPolicyBinding is missing',
      ],
      [
        'a validation was edited',
        () => {
          const s = stored();
          s.policy.spec.validations[0].expression = 'true';
          return s;
        },
        'spec.validations differs',
      ],
      [
        'the failure policy is Ignore',
        () => {
          const s = stored();
          s.policy.spec.failurePolicy = 'Ignore';
          return s;
        },
        'spec.failurePolicy differs',
      ],
      [
        'kapi’s exemption names another user',
        () => {
          const s = stored();
          s.policy.spec.matchConditions[0].expression = "request.userInfo.username != 'eve'";
          return s;
        },
        'spec.matchConditions differs',
      ],
      [
        'an object selector narrows it',
        () => {
          const s = stored();
          s.policy.spec.matchConstraints.objectSelector = { matchLabels: { x: 'y' } };
          return s;
        },
        'spec.matchConstraints selects objects',
      ],
      [
        'the binding only warns',
        () => {
          const s = stored();
          s.binding.spec.validationActions = ['Warn'];
          return s;
        },
        'the binding does not deny',
      ],
      [
        'the binding matches fewer namespaces',
        () => {
          const s = stored();
          s.binding.spec.matchResources = { namespaceSelector: { matchLabels: { a: 'b' } } };
          return s;
        },
        'the binding narrows what it matches',
      ],
    ])('when %s, then that is the drift', (_what, make, drift) => {
      const { policy, binding } = make();
      expect(guardDrift(expected, policy, binding)).toContain(drift);
    });
  });

  it('when kube-apiserver serves several versions, then the newest with both kinds is used; none: undefined', () => {
    const both = ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'];
    expect(
      servedGuardVersion(
        new Map([
          ['v1', both],
          ['v1beta1', both],
        ]),
      ),
    ).toBe('v1');
    expect(
      servedGuardVersion(
        new Map([
          ['v1beta1', both],
          ['v1alpha1', both],
        ]),
      ),
    ).toBe('v1beta1');
    expect(servedGuardVersion(new Map([['v1alpha1', both]]))).toBe('v1alpha1');
    expect(servedGuardVersion(new Map([['v1', ['validatingwebhookconfigurations']]]))).toBeUndefined();
    expect(servedGuardVersion(new Map())).toBeUndefined();
  });

  it('when kapi reads its ServiceAccount token, then the subject is its user name; anything else is not', () => {
    const token = (payload: unknown) => `Bearer x.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;
    expect(tokenSubject(token({ sub: 'system:serviceaccount:kapi-system:kapi-apiserver' }))).toBe(
      'system:serviceaccount:kapi-system:kapi-apiserver',
    );
    expect(tokenSubject(token({ sub: 'admin' }))).toBeUndefined();
    expect(tokenSubject('Bearer not-a-jwt')).toBeUndefined();
    expect(tokenSubject(undefined)).toBeUndefined();
  });

  it('when the chart’s copy is made, then it is the policy with a placeholder for kapi’s ServiceAccount, for each version', () => {
    for (const version of ['v1', 'v1beta1', 'v1alpha1'] as const) {
      const text = guardFileText(version);
      expect(text).toContain(`apiVersion: admissionregistration.k8s.io/${version}`);
      expect(text).toContain(USERNAME_PLACEHOLDER);
      expect(text).toContain('kind: ValidatingAdmissionPolicyBinding');
    }
  });
});
