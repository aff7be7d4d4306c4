/**
 * Two replicas with credentials of their own start at once (a rolling update, kapi beside a second one run with an
 * admin's kubeconfig): each adds itself to the users the guard exempts. The one whose write loses the race (409) must
 * write again over what the other stored, not report the guard missing until its next look: while it reports that,
 * the groups of Users are not asserted and the controller only takes grants away.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { TenantGuardKeeper } from '../../src/tenant-guard/guard-keeper.js';
import { GUARD_NAME, exemptUsersOf } from '../../src/tenant-guard/policy.js';

let sandbox: Sandbox;
const logger = createLogger('error', { silent: true });
const clientAs = (token: string) => new KubeClient(connectionFor(tokenAccess(sandbox.url, token), 'sandbox'));

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

it('when replicas of different users look at the guard together, then each holds it after its first look, and the policy exempts them all', async () => {
  const admin = clientAs(sandbox.adminToken);
  const policyPath = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${GUARD_NAME}`;
  const writes: string[] = [];
  // four replicas, each its own user, all system:masters so that each may write the guard
  const keepers = ['replica-a', 'replica-b', 'replica-c', 'replica-d'].map((username) => {
    const client = clientAs(sandbox.tokenFor(username, ['system:masters']));
    const request = client.request.bind(client);
    // which writes of the guard each made, and how they ended
    client.request = (async (options: Parameters<KubeClient['request']>[0]) => {
      if (options.method === 'PUT' && options.path.endsWith(`/validatingadmissionpolicies/${GUARD_NAME}`))
        return request(options).then(
          (stored) => (writes.push(`${username} stored`), stored),
          (error: { code?: number }) => {
            writes.push(`${username} ${error.code}`);
            throw error;
          },
        );
      return request(options);
    }) as KubeClient['request'];
    return new TenantGuardKeeper({ client, logger, recheckMs: 3_600_000 });
  });
  try {
    await Promise.all(keepers.map((keeper) => keeper.check()));
    // the race was run: some write met another's (otherwise this case proves nothing about it)
    expect(writes.filter((write) => write.endsWith(' 409')).length).toBeGreaterThan(0);
    expect(keepers.map((keeper) => keeper.state)).toEqual(keepers.map(() => ({ state: 'guarded', version: 'v1' })));
    const exempt = exemptUsersOf(await admin.request({ path: policyPath }));
    expect(exempt).toEqual(expect.arrayContaining(['replica-a', 'replica-b', 'replica-c', 'replica-d']));
  } finally {
    await Promise.all(keepers.map((keeper) => keeper.stop()));
  }
});
