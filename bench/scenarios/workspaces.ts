import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcrypt';
import { pageLoads } from '../paired-runs.js';
import type { BenchContext, Scenario } from '../context.js';
import { bearer, passwordGrantForm, send, sendJson } from '../http.js';
import type { Operation } from '../jobs.js';
import { cpuPerOperation, throughput } from '../measure.js';
import { detail, verdict, type Row } from '../report.js';
import { ms, rate } from '../stats.js';

/**
 * SPEC §18's scale (issue 26's row): 200 workspaces, 1,000 namespaces (50 in the first), 2,000 users and 10,000
 * memberships (each user in 5 workspaces), made straight at the backend as `kubectl apply` would. Measured: a
 * member's workspace list (the console's page-load call, as a user in 5 of them) p99 at c1 and pages/s at c16 with
 * kapi's CPU per page; how long a new membership of the 50-namespace workspace takes to be in effect in
 * kube-apiserver's own RBAC in all 50 namespaces (kapi's controller realizing it; SubjectAccessReviews at the
 * backend, polled), and its removal; kapi's RSS increase for holding all of it (after a full GC, the controller's
 * realization finished). Everything is deleted at the end, and first what an interrupted run left; on a kit without
 * a namespace controller the bench finishes the namespaces' deletion itself (their RoleBindings stay in etcd, and
 * kapi's controller repairs them when the namespaces come back).
 */
const WORKSPACES = Number(process.env.BENCH_WORKSPACES ?? 200);
const NAMESPACES = Number(process.env.BENCH_WORKSPACE_NAMESPACES ?? 1_000);
const BIG = 50;
const USERS = Number(process.env.BENCH_WORKSPACE_USERS ?? 2_000);
const PER_USER = 5;
const WRITERS = 16;
const PREFIX = 'bws';
const MEMBER = `${PREFIX}-member`;
const MEMBER_PASSWORD = 'Bench-member-pw-1';
const LIST = '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates?limit=10';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const WRBS = '/apis/iam.kapi.io/v1alpha2/workspacerolebindings';
const TEMPLATES = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
const USERS_PATH = '/apis/iam.kapi.io/v1beta1/users';

export const workspacesMetrics = {
  p99: {
    metric: `member's workspace list (${WORKSPACES} ws, ${NAMESPACES.toLocaleString('en-US')} ns, ${(USERS * PER_USER).toLocaleString('en-US')} memberships) p99 @c1`,
    target: '≤ 10 ms',
  },
  throughput: { metric: 'member’s workspace list @c16', target: '(info)' },
  effect: { metric: `membership change in effect in kube RBAC, ${BIG}-namespace workspace`, target: '≤ 2 s' },
  rss: { metric: 'kapi RSS increase for the workspaces, namespaces, users and memberships', target: '≤ 64 MiB' },
};

const pad = (i: number, width = 4) => String(i).padStart(width, '0');
const ws = (i: number) => `${PREFIX}-ws-${pad(i, 3)}`;
const user = (i: number) => `${PREFIX}-user-${pad(i)}`;
/** Namespace i's workspace: the first BIG in workspace 0, the rest spread over the others. */
const workspaceOfNamespace = (i: number) => (i < BIG ? 0 : 1 + ((i - BIG) % (WORKSPACES - 1)));

async function writeAll(
  ctx: BenchContext,
  requests: { path: string; body?: unknown }[],
  method: 'POST' | 'PUT' | 'DELETE',
) {
  const headers = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const { path, body } = requests[i] as { path: string; body?: unknown };
        const answer = await send(`${ctx.env.backendUrl}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        if (answer.status >= 300 && !(answer.status === 404 || answer.status === 409))
          throw new Error(`${method} ${path}: HTTP ${answer.status}`);
      }
    }),
  );
}

const membership = (workspace: string, name: string, base: string, subject = name) => ({
  path: WRBS,
  body: {
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'WorkspaceRoleBinding',
    metadata: {
      name: `${name}-${workspace}-${base}`,
      labels: { 'kapi.io/workspace': workspace, 'iam.kapi.io/user-ref': subject },
    },
    roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: `${workspace}-${base}` },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: subject }],
  },
});

/** Whether kube-apiserver's own authorizer lets `who` list pods in every namespace of `namespaces` (or in none). */
async function inEffect(ctx: BenchContext, who: string, namespaces: string[], allowed: boolean): Promise<boolean> {
  const headers = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  const answers = await Promise.all(
    namespaces.map(async (namespace) => {
      // kube-apiserver answers a review 201 Created
      const answer = await send(`${ctx.env.backendUrl}/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          spec: {
            user: who,
            groups: ['system:authenticated'],
            resourceAttributes: { verb: 'list', resource: 'pods', namespace },
          },
        }),
      });
      if (answer.status >= 300) throw new Error(`a review was answered HTTP ${answer.status}`);
      return JSON.parse(answer.body.toString('utf8')) as { status: { allowed?: boolean } };
    }),
  );
  return answers.every((answer) => (answer.status.allowed === true) === allowed);
}

/**
 * Ends the deletion of those of `namespaces` still Terminating after a cluster's namespace controller would have
 * emptied them: a kit has none, and a namespace left Terminating refuses the next run's RoleBindings.
 */
async function finishDeletion(ctx: BenchContext, namespaces: string[]): Promise<void> {
  await sleep(5_000);
  const listed = await sendJson<{ items: { metadata: { name: string }; status?: { phase?: string } }[] }>(
    `${ctx.env.backendUrl}/api/v1/namespaces`,
    { headers: ctx.env.adminHeaders },
  );
  const ours = new Set(namespaces);
  const stuck = listed.items.filter((item) => ours.has(item.metadata.name) && item.status?.phase === 'Terminating');
  await writeAll(
    ctx,
    stuck.map((item) => ({
      path: `/api/v1/namespaces/${item.metadata.name}/finalize`,
      body: { apiVersion: 'v1', kind: 'Namespace', ...item, spec: { finalizers: [] } },
    })),
    'PUT',
  );
}

async function realizedBindings(ctx: BenchContext): Promise<number> {
  // the whole list (a few thousand small objects): with a label selector, kube-apiserver gives no remainingItemCount
  const list = await sendJson<{ items: unknown[] }>(
    `${ctx.env.backendUrl}${RBAC}/rolebindings?labelSelector=iam.kapi.io/realizes%3Dworkspace`,
    { headers: ctx.env.adminHeaders },
  );
  return list.items.length;
}

export const workspacesScenario: Scenario = {
  title: `Workspaces at scale: ${WORKSPACES} workspaces, ${NAMESPACES.toLocaleString('en-US')} namespaces, ${USERS.toLocaleString('en-US')} users, ${(USERS * PER_USER).toLocaleString('en-US')} memberships`,
  planned: Object.values(workspacesMetrics),
  async run(ctx: BenchContext) {
    const workspaces = Array.from({ length: WORKSPACES }, (_, i) => ws(i));
    const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `${PREFIX}-ns-${pad(i)}`);
    const users = Array.from({ length: USERS }, (_, i) => user(i));
    const bigNamespaces = namespaces.slice(0, BIG);
    const memberships = users.flatMap((name, i) =>
      Array.from({ length: PER_USER }, (_, k) => {
        // admins in 1 of 10, viewers in 3 of 10, the rest regular members
        const base = (i + k) % 10 === 0 ? 'admin' : (i + k) % 10 < 4 ? 'viewer' : 'regular';
        return membership(ws((i * PER_USER + k) % WORKSPACES), name, base);
      }),
    );
    const memberWorkspaces = Array.from({ length: PER_USER }, (_, k) => ws((1 + k * 7) % WORKSPACES));
    const cleanup = async () => {
      await writeAll(
        ctx,
        [...memberships, ...memberWorkspaces.map((w) => membership(w, MEMBER, 'regular'))].map((m) => ({
          path: `${WRBS}/${m.body.metadata.name}`,
        })),
        'DELETE',
      );
      await writeAll(
        ctx,
        workspaces.map((name) => ({ path: `${TEMPLATES}/${name}` })),
        'DELETE',
      );
      await writeAll(
        ctx,
        namespaces.map((name) => ({ path: `/api/v1/namespaces/${name}` })),
        'DELETE',
      );
      await finishDeletion(ctx, namespaces);
      await writeAll(
        ctx,
        [...users, MEMBER].map((name) => ({ path: `${USERS_PATH}/${name}` })),
        'DELETE',
      );
    };
    try {
      // what an interrupted run left behind goes first
      await cleanup();
      const hash = await bcrypt.hash(MEMBER_PASSWORD, 4);
      await writeAll(
        ctx,
        [
          {
            path: USERS_PATH,
            body: {
              apiVersion: 'iam.kapi.io/v1beta1',
              kind: 'User',
              metadata: { name: MEMBER },
              spec: { email: `${MEMBER}@bench.kapi.test`, password: hash },
            },
          },
        ],
        'POST',
      );
      let memberToken = '';
      for (let attempt = 0; !memberToken; attempt++) {
        const answer = await send(`${ctx.kapi.url}/oauth/token`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: passwordGrantForm({ name: MEMBER, password: MEMBER_PASSWORD }),
        });
        if (answer.status === 200)
          memberToken = (JSON.parse(answer.body.toString('utf8')) as { access_token: string }).access_token;
        else if (attempt > 100) throw new Error(`the member could not log in: HTTP ${answer.status}`);
        else await sleep(100);
      }
      const list = () =>
        sendJson<{ items: unknown[]; totalItems: number }>(`${ctx.kapi.url}${LIST}`, { headers: bearer(memberToken) });
      await list();
      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const before = ctx.kapi.memory();
      const started = Date.now();
      await writeAll(
        ctx,
        workspaces.map((name) => ({
          path: TEMPLATES,
          body: {
            apiVersion: 'tenant.kapi.io/v1alpha2',
            kind: 'WorkspaceTemplate',
            metadata: { name },
            spec: { template: { spec: {} }, placement: {} },
          },
        })),
        'POST',
      );
      await writeAll(
        ctx,
        namespaces.map((name, i) => ({
          path: '/api/v1/namespaces',
          body: {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name, labels: { 'kapi.io/workspace': ws(workspaceOfNamespace(i)) } },
          },
        })),
        'POST',
      );
      await writeAll(
        ctx,
        users.map((name) => ({
          path: USERS_PATH,
          body: {
            apiVersion: 'iam.kapi.io/v1beta1',
            kind: 'User',
            metadata: { name },
            // they never log in: no password (one would be moved into a Secret by kapi, 2,000 writes more)
            spec: { email: `${name}@bench.kapi.test` },
          },
        })),
        'POST',
      );
      await writeAll(ctx, [...memberships, ...memberWorkspaces.map((w) => membership(w, MEMBER, 'regular'))], 'POST');
      // kapi has it all: the member's list holds its 5, and the controller has realized every namespace's bindings
      // (per namespace: admins' and viewers' of its workspace)
      const rolesIn = new Map<string, Set<string>>();
      for (const m of memberships) {
        const base = m.body.roleRef.name.slice(m.body.metadata.labels['kapi.io/workspace'].length + 1);
        if (base !== 'admin' && base !== 'viewer') continue;
        const held = rolesIn.get(m.body.metadata.labels['kapi.io/workspace']) ?? new Set<string>();
        held.add(base);
        rolesIn.set(m.body.metadata.labels['kapi.io/workspace'], held);
      }
      const expected = namespaces.reduce((sum, _, i) => sum + (rolesIn.get(ws(workspaceOfNamespace(i)))?.size ?? 0), 0);
      const deadline = Date.now() + 15 * 60_000;
      for (;;) {
        const [listed, realized] = [(await list()).totalItems, await realizedBindings(ctx)];
        if (listed >= PER_USER && realized >= expected) break;
        if (Date.now() > deadline)
          throw new Error(
            `after 15 min: the member lists ${listed} workspaces, ${realized} of ${expected} RoleBindings realized`,
          );
        await sleep(500);
      }
      detail(
        `${WORKSPACES} workspaces, ${NAMESPACES} namespaces, ${USERS} users and ${memberships.length} memberships made, seen and realized in ${((Date.now() - started) / 1000).toFixed(1)} s (${await realizedBindings(ctx)} RoleBindings realized)`,
      );
      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const after = ctx.kapi.memory();

      const operation: Operation = {
        kind: 'request',
        url: `${ctx.kapi.url}${LIST}`,
        headers: bearer(memberToken),
        expect: 200,
      };
      const { c1, c1s, c16, c16s } = await pageLoads(operation);

      // a new viewer of the 50-namespace workspace: written, then in effect at kube-apiserver in all 50 namespaces
      const newcomer = MEMBER; // in no role of workspace 0 (user 0 is its admin)
      const grant = membership(ws(0), newcomer, 'viewer', newcomer);
      grant.body.metadata.name = `${newcomer}-late-${ws(0)}-viewer`;
      const effects: number[] = [];
      for (const [what, allowed] of [
        ['given', true],
        ['removed', false],
      ] as const) {
        const start = Date.now();
        if (allowed) await writeAll(ctx, [grant], 'POST');
        else await writeAll(ctx, [{ path: `${WRBS}/${grant.body.metadata.name}` }], 'DELETE');
        while (!(await inEffect(ctx, newcomer, bigNamespaces, allowed))) await sleep(20);
        effects.push(Date.now() - start);
        detail(
          `a viewer of the ${BIG}-namespace workspace ${what}: in effect in all ${BIG} namespaces after ${Date.now() - start} ms`,
        );
      }
      const increase = after.rssMiB - before.rssMiB;
      const worst = Math.max(...effects);
      const rows: Row[] = [
        {
          ...workspacesMetrics.p99,
          value: `${ms(c1s.p99)} (p50 ${ms(c1s.p50)})`,
          verdict: verdict(c1.errors + c16.errors === 0 && c1s.p99 <= 10),
        },
        {
          ...workspacesMetrics.throughput,
          value: `${rate(throughput(c16))}, kapi ${Math.round(cpuPerOperation(c16).kapi ?? Number.NaN)} µs CPU per page (c1 ${Math.round(cpuPerOperation(c1).kapi ?? Number.NaN)} µs)`,
          verdict: 'info',
        },
        {
          ...workspacesMetrics.effect,
          value: `given ${effects[0]} ms, removed ${effects[1]} ms`,
          verdict: verdict(worst <= 2_000),
        },
        {
          ...workspacesMetrics.rss,
          value: `${increase.toFixed(1)} MiB (${before.rssMiB.toFixed(0)} → ${after.rssMiB.toFixed(0)} MiB, after a full GC)`,
          verdict: verdict(increase <= 64),
        },
      ];
      return {
        rows,
        figures: {
          rssBeforeMiB: before.rssMiB,
          rssAfterMiB: after.rssMiB,
          effectMs: effects,
          c1: { ...c1s, rps: throughput(c1), errors: c1.errors, cpuUsPerPage: cpuPerOperation(c1) },
          c16: { ...c16s, rps: throughput(c16), errors: c16.errors, cpuUsPerPage: cpuPerOperation(c16) },
        },
      };
    } finally {
      await cleanup().catch((error: unknown) => detail(`workspaces left behind: ${String(error)}`));
    }
  },
};
