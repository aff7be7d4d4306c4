import { describe, expect, it } from '@jest/globals';
import { abnormalWorkloads, clusterUsage, namespaceUsage } from '../../../../src/apis/resources/v1alpha2/usage.js';

const quota = (hard: Record<string, string>, used: Record<string, string>) => ({ status: { hard, used } });
const noCounts = new Map<string, number>();

describe('a project’s usage (KubeSphere 3.4’s namespace quotas)', () => {
  it('when it has no quota, then it has only used: every counted key, 0 where nothing is counted', () => {
    const usage = namespaceUsage(
      'p',
      [],
      new Map([
        ['count/pods', 3],
        ['persistentvolumeclaims', 1],
      ]),
    );
    expect(usage).toEqual({
      namespace: 'p',
      data: {
        used: {
          'count/pods': '3',
          'count/deployments.apps': '0',
          'count/statefulsets.apps': '0',
          'count/daemonsets.apps': '0',
          'count/jobs.batch': '0',
          'count/cronjobs.batch': '0',
          'count/services': '0',
          'count/ingresses.extensions': '0',
          persistentvolumeclaims: '1',
        },
      },
    });
  });

  it.each([
    ['cpu in millicores', '2', '500m', '1500m'],
    ['binary memory', '1Gi', '512Mi', '512Mi'],
    ['decimal memory', '1G', '250M', '750M'],
    ['a count', '10', '3', '7'],
    ['a use over its limit: never below zero', '1Gi', '1536Mi', '0'],
    ['a limit used up', '4', '4', '0'],
    ['large binary values, exactly', '10Ti', '1Gi', '10239Gi'],
    ['large decimal values, exactly', '20T', '1', '19999999999999'],
    ['a fraction of a binary suffix', '1.5Gi', '512Mi', '1Gi'],
    ['an exponent', '1e3', '1', '999'],
    ['a use it cannot read', '2', 'lots', '0'],
  ])('when a limit has a use (%s), then left is the rest in the limit’s format', (_case, hard, used, left) => {
    const usage = namespaceUsage('p', [quota({ r: hard }, { r: used })], noCounts);
    expect(usage.data.left).toEqual({ r: left });
  });

  it('when several quotas limit the same resource, then the smallest limit and the smallest use are taken', () => {
    const usage = namespaceUsage(
      'p',
      [
        quota({ 'requests.cpu': '2', 'count/pods': '10' }, { 'requests.cpu': '500m', 'count/pods': '4' }),
        quota({ 'requests.cpu': '1500m' }, { 'requests.cpu': '1' }),
      ],
      new Map([['count/pods', 99]]),
    );
    expect(usage.data.hard).toEqual({ 'requests.cpu': '1500m', 'count/pods': '10' });
    // the quota's own count of pods wins over kapi's
    expect(usage.data.used).toMatchObject({ 'requests.cpu': '500m', 'count/pods': '4' });
    expect(usage.data.left).toEqual({ 'requests.cpu': '1', 'count/pods': '6' });
  });

  it('when a limit has no use yet, then it has no left; malformed lists and values are skipped', () => {
    const usage = namespaceUsage(
      'p',
      [quota({ 'limits.cpu': '2' }, {}), { status: { hard: 'x', used: [1] } }, {}],
      noCounts,
    );
    expect(usage.data.hard).toEqual({ 'limits.cpu': '2' });
    expect(usage.data.left).toBeUndefined();
  });
});

describe('the cluster’s usage and the abnormal workloads', () => {
  it('when counted, then the cluster has only used, under the same keys', () => {
    const usage = clusterUsage(new Map([['count/services', 5]]));
    expect(usage.namespace).toBe('');
    expect(usage.data.hard).toBeUndefined();
    expect(usage.data.used['count/services']).toBe('5');
    expect(Object.keys(usage.data.used)).toHaveLength(9);
  });

  it('when counted, then every kind is answered, 0 where none is abnormal', () => {
    expect(abnormalWorkloads('p', new Map([['jobs', 2]]))).toEqual({
      namespace: 'p',
      data: { deployments: 0, statefulsets: 0, daemonsets: 0, jobs: 2, persistentvolumeclaims: 0 },
    });
  });
});
