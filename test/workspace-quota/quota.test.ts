import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import {
  admitPod,
  amountsOf,
  missingAmounts,
  podUsage,
  quotaSpecProblems,
  quotaStatus,
  selects,
  workspaceQuotaOf,
  type Amounts,
  type WorkspaceQuota,
} from '../../src/workspace-quota/quota.js';
import { countUsage, sameStatus } from '../../src/controllers/workspace-quota/controller.js';

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
    ['a finished pod takes nothing', pod([{ name: 'app', requests: { cpu: '1' } }], 'Succeeded'), {}],
  ])('when the pod is %s, then its usage is kube’s pod evaluator’s', (_case, input, usage) => {
    expect(podUsage(input)).toEqual(usage);
  });

  it.each<[string, Record<string, string>, string[]]>([
    ['nothing of compute limited', { pods: '3' }, []],
    ['limits.cpu limited', { 'limits.cpu': '2' }, ['limits.cpu for: app,sidecar']],
    [
      'requests of both limited',
      { 'requests.cpu': '1', memory: '1Gi' },
      ['requests.cpu for: app,sidecar', 'requests.memory for: sidecar'],
    ],
  ])('when %s, then a pod must state what is missing', (_case, hard, missing) => {
    const input = pod([
      { name: 'app', requests: { memory: '1Mi' } },
      { name: 'sidecar', limits: {} },
    ]);
    expect(missingAmounts(input, amountsOf(hard))).toEqual(missing);
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
    expect(counted.total).toMatchObject({ pods: 1, 'requests.cpu': 500, 'limits.cpu': 1000 });
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
});
