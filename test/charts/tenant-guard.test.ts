import { describe, expect, test } from '@jest/globals';
import { guardDrift, guardObjects } from '../../src/tenant-guard/policy.js';
import { objectsOfKind, renderChart, setValues, type KubeObject } from './helm.js';

// The chart installs the tenant guard kapi checks for at run time: the same objects, for its ServiceAccount.
const policies = (objects: KubeObject[]) => objectsOfKind<KubeObject>(objects, 'ValidatingAdmissionPolicy');
const served = (version: string) => ['--api-versions', `admissionregistration.k8s.io/${version}/ValidatingAdmissionPolicy`];

describe('the chart’s tenant guard', () => {
  test.each(['v1', 'v1beta1', 'v1alpha1'])(
    'when the cluster serves the policy at %s (and nothing newer), then the chart installs kapi’s guard at it, exempting its ServiceAccount',
    async (version) => {
      const objects = await renderChart(served(version));
      const [policy] = policies(objects);
      const [binding] = objectsOfKind<KubeObject>(objects, 'ValidatingAdmissionPolicyBinding');
      expect(policy?.apiVersion).toBe(`admissionregistration.k8s.io/${version}`);
      const expected = guardObjects(version as 'v1', {
        kapiUsernames: ['system:serviceaccount:kapi-system:kapi-apiserver'],
      });
      expect(guardDrift(expected, policy, binding)).toEqual([]);
    },
  );

  test('when the cluster serves v1 and v1beta1, then v1; when it serves none, then no policy (and NOTES warn)', async () => {
    const both = await renderChart([...served('v1beta1'), ...served('v1')]);
    expect(policies(both).map((p) => p.apiVersion)).toEqual(['admissionregistration.k8s.io/v1']);
    expect(policies(await renderChart())).toEqual([]);
  });

  test('when tenantGuard.apiVersion is none, then nothing is installed even where it is served; a version given is used', async () => {
    expect(policies(await renderChart([...served('v1'), ...setValues({ 'tenantGuard.apiVersion': 'none' })]))).toEqual([]);
    const pinned = await renderChart(setValues({ 'tenantGuard.apiVersion': 'v1beta1' }));
    expect(policies(pinned).map((p) => p.apiVersion)).toEqual(['admissionregistration.k8s.io/v1beta1']);
  });

  test('when installed in another namespace, then the guard exempts that namespace’s ServiceAccount', async () => {
    const objects = await renderChart(served('v1'), 'platform');
    const expected = guardObjects('v1', { kapiUsernames: ['system:serviceaccount:platform:kapi-apiserver'] });
    expect(guardDrift(expected, policies(objects)[0], objectsOfKind<KubeObject>(objects, 'ValidatingAdmissionPolicyBinding')[0])).toEqual([]);
  });
});
