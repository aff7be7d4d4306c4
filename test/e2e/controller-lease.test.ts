/**
 * The controllers' election (SPEC §17–18: the platform roles and workspaces realized in RBAC by one replica), on the
 * sandbox and on real kube-apiservers: of two replicas exactly one leads; when the leader is killed (it can no longer
 * reach kube-apiserver, so it neither renews nor releases the Lease), it steps down before the other takes over,
 * which it does once the Lease has lapsed. Proved by the order of events, not by a time.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LeaderElector } from '../../src/controllers/leader-election.js';
import type { KubeClient, KubeRequest } from '../../src/kube/client.js';
import { silentLogger, startE2E, waitFor, type E2E } from './harness.js';
import { assertTarget } from './target.js';

let e2e: E2E;
const electors: LeaderElector[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
}, 90_000);

afterAll(async () => {
  for (const elector of electors) await elector.stop();
  await e2e?.stop();
});

describe('the controllers’ Lease', () => {
  it('when two replicas elect, exactly one leads; when the leader is killed, it steps down and then the other leads', async () => {
    const name = e2e.name('controllers');
    const namespace = e2e.runId;
    const events: string[] = [];
    let killed = false;
    // replica a's connection to kube-apiserver, cut when it is "killed"
    const cut = {
      request: (request: KubeRequest) => (killed ? Promise.reject(new Error('killed')) : e2e.admin.request(request)),
    } as unknown as KubeClient;
    const replica = (identity: string, client: KubeClient) => {
      const elector = new LeaderElector({
        client,
        logger: silentLogger,
        namespace,
        name,
        identity,
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 200,
        onStartedLeading: () => events.push(`${identity} leads`),
        onStoppedLeading: () => events.push(`${identity} stops`),
      });
      electors.push(elector);
      elector.start();
      return elector;
    };
    const a = replica('a', cut);
    await waitFor(() => a.isLeader);
    const b = replica('b', e2e.admin);
    // b has watched a renew the Lease twice and still follows
    const renewed = async () =>
      (
        await e2e.admin.request<{ spec: { renewTime?: string } }>({
          path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
        })
      ).spec.renewTime;
    for (let i = 0; i < 2; i++) {
      const before = await renewed();
      await waitFor(async () => (await renewed()) !== before);
    }
    expect(b.isLeader).toBe(false);
    expect(events).toEqual(['a leads']);

    killed = true;
    await waitFor(() => b.isLeader);
    expect(events).toEqual(['a leads', 'a stops', 'b leads']);
    const lease = await e2e.admin.request<{ spec: { holderIdentity?: string; leaseTransitions?: number } }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
    });
    expect(lease.spec.holderIdentity).toBe('b');
  }, 60_000);
});
