import type { BenchContext } from './context.js';
import { send } from './http.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/**
 * Grants the bench user cluster-wide rules for one row (a cluster's bench user reads nodes only): a ClusterRole and
 * its binding named `<user>-<row>`, made at the backend; the answer takes them away again.
 */
export async function grantBenchUser(
  ctx: BenchContext,
  row: string,
  rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[],
): Promise<() => Promise<void>> {
  const name = `${ctx.env.kapiUser.name}-${row}`;
  const headers = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  const rbac = `${ctx.env.backendUrl}${RBAC}`;
  await send(`${rbac}/clusterroles`, { method: 'POST', headers, body: JSON.stringify({ metadata: { name }, rules }) });
  await send(`${rbac}/clusterrolebindings`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: ctx.env.kapiUser.name }],
    }),
  });
  return async () => {
    for (const kind of ['clusterrolebindings', 'clusterroles'])
      await send(`${rbac}/${kind}/${name}`, { method: 'DELETE', headers: ctx.env.adminHeaders }).catch(() => undefined);
  };
}
