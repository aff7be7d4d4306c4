import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import {
  admitPod,
  amountsOf,
  missingAmounts,
  podAmountsValid,
  podUsage,
  quotaSpecProblems,
  quotaStatus,
  selects,
  workspaceQuotaOf,
  type Amounts,
  type WorkspaceQuota,
} from '../../src/workspace-quota/quota.js';
import { countUsage, mayWrite, sameStatus } from '../../src/controllers/workspace-quota/controller.js';

type Resources = { cpu?: string; memory?: string };

function pod(containers: { name: string; requests?: Resources; limits?: Resources }[], phase?: string): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'dev' },
    spec: {
      containers: containers.map((c) => ({ name: c.name, resources: { requests: c.requests, limits: c.limits } })),
    },
    ...(phase && { status: { phase } }),
  } as V1Pod;
}

const quota = (hard: Record<string, string>, used?: Record<string, string>): WorkspaceQuota =>
  workspaceQuotaOf({
    metadata: { name: 'ws' },
    spec: { quota: { hard }, selector: { 'kapi.io/workspace': 'ws' } },
    ...(used && { status: { total: { used } } }),
  }) as WorkspaceQuota;

const Mi = 2 ** 20;

describe('workspace quotas, pure', () => {
  it.each<[string, V1Pod, Amounts]>([
    [
      'one container with requests and limits',
      pod([{ name: 'app', requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } }]),
      {
        pods: 1,
        'count/pods': 1,
        'requests.cpu': 250,
        cpu: 250,
        'requests.memory': 64 * Mi,
        memory: 64 * Mi,
        'limits.cpu': 1000,
        'limits.memory': 128 * Mi,
      },
    ],
    [
      'a finished pod takes nothing but its place in count/pods',
      pod([{ name: 'app', requests: { cpu: '1' } }], 'Succeeded'),
      { 'count/pods': 1 },
    ],
  ])('when the pod is %s, then its usage is kube’s pod evaluator’s', (_case, input, usage) => {
    expect(podUsage(input)).toEqual(usage);
  });

  it.each<[string, Record<string, string>, string[]]>([
    ['nothing of compute limited', { pods: '3' }, []],
    ['limits.cpu limited', { 'limits.cpu': '2' }, ['limits.cpu for: app,sidecar']],
    [
      'requests of both limited',
      { 'requests.cpu': '1', memory: '1Gi' },
      ['memory for: sidecar', 'requests.cpu for: app,sidecar'],
    ],
  ])('when %s, then a pod must state what is missing', (_case, hard, missing) => {
    const input = pod([
      { name: 'app', requests: { memory: '1Mi' } },
      { name: 'sidecar', limits: {} },
    ]);
    expect(missingAmounts(input, amountsOf(hard))).toEqual(missing);
  });

  it.each<[string, unknown, boolean]>([
    ['quantities', { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: 1 } }, true],
    ['a negative request (kube-apiserver never sends one: a forged review)', { requests: { cpu: '-100' } }, false],
    ['no quantity', { limits: { memory: 'lots' } }, false],
    ['an object for a quantity', { limits: { cpu: { value: 1 } } }, false],
  ])('when a pod states %s, then its amounts are valid: %s', (_case, resources, valid) => {
    const input = { spec: { containers: [{ name: 'app', resources }] } } as unknown as V1Pod;
    expect(podAmountsValid(input)).toBe(valid);
  });

  it('when a pod is resized, then only what it takes more is charged, and a smaller one charges nothing', () => {
    const before = pod([{ name: 'app', requests: { cpu: '500m' }, limits: { cpu: '1' } }]);
    const bigger = pod([{ name: 'app', requests: { cpu: '800m' }, limits: { cpu: '1' } }]);
    const q = quota({ 'requests.cpu': '1', pods: '1' });
    expect(admitPod(q, amountsOf({ 'requests.cpu': '500m', pods: '1' }), bigger, before)).toMatchObject({
      allowed: true,
      used: { 'requests.cpu': 800, pods: 1 },
    });
    expect(admitPod(q, amountsOf({ 'requests.cpu': '900m', pods: '1' }), bigger, before)).toMatchObject({
      allowed: false,
      message: expect.stringContaining('requested: requests.cpu=300m'),
    });
    expect(admitPod(q, amountsOf({ 'requests.cpu': '500m', pods: '1' }), before, bigger)).toMatchObject({
      allowed: true,
      used: { 'requests.cpu': 500, pods: 1 },
    });
  });

  it('when a pod fits, then it is admitted and the new use is the old plus its own', () => {
    const decision = admitPod(
      quota({ 'requests.cpu': '1', pods: '3' }, { 'requests.cpu': '500m', pods: '1' }),
      amountsOf({ 'requests.cpu': '500m', pods: '1' }),
      pod([{ name: 'app', requests: { cpu: '500m' } }]),
    );
    expect(decision).toMatchObject({ allowed: true, used: { 'requests.cpu': 1000, pods: 2 } });
  });

  it('when a pod would pass a limit, then it is refused with kube’s message: what it asked, what is used, the limit', () => {
    const decision = admitPod(
      quota({ 'requests.cpu': '1', 'limits.memory': '1Gi', pods: '10' }),
      amountsOf({ 'requests.cpu': '800m', 'limits.memory': '512Mi', pods: '2' }),
      pod([{ name: 'app', requests: { cpu: '300m', memory: '1Mi' }, limits: { cpu: '1', memory: '256Mi' } }]),
    );
    expect(decision).toEqual({
      allowed: false,
      reason: 'exceeded',
      message: 'exceeded quota: ws, requested: requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1',
    });
  });

  it('when a quota was lowered below its use, then even a pod asking nothing limited is refused (as kube)', () => {
    const decision = admitPod(quota({ pods: '1' }), amountsOf({ pods: '2' }), pod([{ name: 'app' }]));
    expect(decision).toMatchObject({ allowed: false, message: expect.stringContaining('limited: pods=1') });
  });

  it('when a quota limits what a pod does not state, then the refusal says so before any sum', () => {
    const decision = admitPod(quota({ 'limits.memory': '1Gi' }), {}, pod([{ name: 'app' }]));
    expect(decision).toEqual({
      allowed: false,
      reason: 'missing',
      message: 'failed quota: ws: must specify limits.memory for: app',
    });
  });

  it.each<[string, Record<string, string>, Record<string, string> | undefined, boolean]>([
    ['its workspace', { 'kapi.io/workspace': 'ws' }, { 'kapi.io/workspace': 'ws' }, true],
    ['another workspace', { 'kapi.io/workspace': 'ws' }, { 'kapi.io/workspace': 'other' }, false],
    ['no workspace', { 'kapi.io/workspace': 'ws' }, undefined, false],
    ['an empty selector (it would stop every pod of the cluster)', {}, { 'kapi.io/workspace': 'ws' }, false],
  ])('when the namespace is of %s, then the quota covers it: %s', (_case, selector, labels, covered) => {
    expect(selects({ selector }, labels)).toBe(covered);
  });

  it.each<[string, unknown, unknown[]]>([
    ['the console’s four limits', { quota: { hard: { 'limits.cpu': '2', 'requests.memory': '1Gi' } } }, []],
    ['no hard', { quota: {} }, ['spec.quota.hard: Required value']],
    [
      'a resource the webhook does not see',
      { quota: { hard: { services: '3' } } },
      [expect.stringContaining('spec.quota.hard[services]: Unsupported value')],
    ],
    [
      'a negative amount',
      { quota: { hard: { pods: '-1' } } },
      [expect.stringContaining('spec.quota.hard[pods]: Invalid value')],
    ],
    ['no quantity', { quota: { hard: { 'limits.cpu': 'lots' } } }, [expect.stringContaining('Invalid value: "lots"')]],
    [
      'scopes',
      { quota: { hard: { pods: '1' }, scopes: ['BestEffort'] } },
      ['spec.quota.scopes: Forbidden: kapi’s workspace quotas have no scopes'],
    ],
  ])('when a quota written through kapi has %s, then its problems are %j', (_case, spec, problems) => {
    expect(quotaSpecProblems(spec)).toEqual(problems);
  });

  it('when the use is counted, then only the covered namespaces’ unfinished pods count, each namespace listed', () => {
    const amounts = { cpuRequestsMilli: 500, cpuLimitsMilli: 1000, memoryRequestsBytes: 64 * Mi, memoryLimitsBytes: 0 };
    const counted = countUsage(
      { selector: { 'kapi.io/workspace': 'ws' } },
      [
        { name: 'dev', workspace: 'ws' },
        { name: 'empty', workspace: 'ws' },
        { name: 'other', workspace: 'other' },
      ],
      [
        { namespace: 'dev', finished: false, ...amounts },
        { namespace: 'dev', finished: true, ...amounts },
        { namespace: 'other', finished: false, ...amounts },
      ],
    );
    // the finished pod keeps its place in count/pods only
    expect(counted.total).toMatchObject({ pods: 1, 'count/pods': 2, 'requests.cpu': 500, 'limits.cpu': 1000 });
    expect(counted.namespaces).toEqual([
      { namespace: 'dev', used: expect.objectContaining({ pods: 1 }) },
      { namespace: 'empty', used: {} },
    ]);
    const raw = { spec: { quota: { hard: { pods: '5', 'requests.cpu': '2' } } } };
    const status = quotaStatus(raw, counted.total, counted.namespaces);
    expect(status).toEqual({
      total: { hard: { pods: '5', 'requests.cpu': '2' }, used: { pods: '1', 'requests.cpu': '500m' } },
      namespaces: [
        { namespace: 'dev', hard: { pods: '5', 'requests.cpu': '2' }, used: { pods: '1', 'requests.cpu': '500m' } },
        { namespace: 'empty', hard: { pods: '5', 'requests.cpu': '2' }, used: { pods: '0', 'requests.cpu': '0' } },
      ],
    });
    expect(sameStatus(JSON.parse(JSON.stringify(status)), status)).toBe(true);
    expect(sameStatus({ ...status, total: { ...status.total, used: { pods: '2' } } }, status)).toBe(false);
  });

  it.each<[string, string | undefined, Record<string, string>, boolean]>([
    ['never charged', undefined, { pods: '1' }, true],
    ['charged a minute ago', '2026-11-29T19:00:00Z', { pods: '1' }, true],
    [
      'charged a moment ago, and the recount lowers it (the pod may not be watched yet)',
      '2026-11-29T19:00:55Z',
      { pods: '1' },
      false,
    ],
    ['charged a moment ago, and the recount raises it', '2026-11-29T19:00:55Z', { pods: '3' }, true],
  ])('when the quota was %s, then a recount may write: %s', (_case, chargedAt, counted, may) => {
    const stored = { ...(chargedAt && { chargedAt }), total: { used: { pods: '2' } } };
    const now = Date.parse('2026-11-29T19:01:00Z');
    expect(mayWrite(stored, amountsOf(counted), amountsOf({ pods: '5' }), now, 10_000)).toBe(may);
  });

  it('when a stored status differs from a recount only in the time of its last charge, then it is the same', () => {
    const status = { total: { hard: { pods: '5' }, used: { pods: '1' } }, namespaces: [] };
    expect(sameStatus({ ...status, chargedAt: '2026-11-29T19:00:00Z' }, status)).toBe(true);
  });
});
