import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcrypt';
import { startDirectory } from '../../src/sandbox/directory/directory.js';
import type { BenchContext, Scenario } from '../context.js';
import { passwordGrantForm, send, sendJson } from '../http.js';
import type { LoadResult, RequestOperation } from '../jobs.js';
import { accountCpuOf, accountedCpu, cpuNote, errorNote, load, throughput } from '../measure.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, rate, summarize } from '../stats.js';

/**
 * SPEC §14: logins against a directory (a real slapd over ldaps://, the LDAP provider as configured in a cluster), and
 * password logins with login records off and on, each with the writes kube-apiserver received per login, counted
 * from its own `apiserver_request_total` (the sandbox serves the same counter): a login storm must not become an etcd
 * write storm. One user logging in again and again (a console behind one ingress, a script) and many users logging in
 * once or twice each (a morning rush) write differently: both are measured.
 */
export const accountsMetrics = {
  directory: { metric: 'directory logins/s (LDAP over ldaps, real slapd)', target: '(info)' },
  oneUser: {
    metric: 'password logins, one user: records off → on',
    target: 'records ≤ 1 write/user/2 s',
    reference: 'records: 1 create per login (a LoginRecord each)',
  },
  manyUsers: {
    metric: 'password logins, 32 users in turn: records off → on',
    target: 'records ≤ 1 write/user/2 s',
    reference: 'records: 1 create per login (a LoginRecord each)',
  },
};

const STORM_MS = 6_000;
const MANY_USERS = 32;
/** The login records flush every 2 s: counters are read once the last flush of a run is surely written. */
const FLUSH_WAIT_MS = 3_000;
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
/**
 * Writes that reach etcd. Reviews (POST subjectaccessreviews, tokenreviews) are never stored; leases are
 * kube-apiserver's own heartbeat (its identity lease, every 10 s), not the logins'.
 */
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);
const NOT_COUNTED_GROUPS = new Set(['authorization.k8s.io', 'authentication.k8s.io', 'coordination.k8s.io']);
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const HISTORIES = '/apis/iam.kapi.io/v1beta1/loginhistories';
const CONFIGURATIONS = '/apis/installer.kapi.io/v1alpha1';

/** Prometheus text: the samples of one family, with their labels. */
function samples(text: string, family: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${family}{`) && !line.startsWith(`${family} `)) continue;
    const match = /^[^{\s]+(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ labels, value: Number(match[2]) });
  }
  return out;
}

/** kube-apiserver's stored writes so far, by "VERB resource[/subresource]". */
async function backendWrites(ctx: BenchContext): Promise<Map<string, number>> {
  const answer = await send(`${ctx.env.backendUrl}/metrics`, { headers: ctx.env.adminHeaders });
  if (answer.status !== 200) throw new Error(`the backend's /metrics answered ${answer.status}: writes not counted`);
  const writes = new Map<string, number>();
  for (const { labels, value } of samples(answer.body.toString('utf8'), 'apiserver_request_total')) {
    if (!WRITE_VERBS.has(labels.verb ?? '') || !labels.resource || NOT_COUNTED_GROUPS.has(labels.group ?? '')) continue;
    if (labels.dry_run) continue;
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    writes.set(key, (writes.get(key) ?? 0) + value);
  }
  return writes;
}

async function successfulLogins(ctx: BenchContext): Promise<number> {
  const answer = await send(ctx.kapi.metricsUrl);
  return samples(answer.body.toString('utf8'), 'kapi_login_attempts_total')
    .filter(({ labels }) => labels.grant === 'password' && labels.result === 'success')
    .reduce((sum, { value }) => sum + value, 0);
}

interface Storm {
  result: LoadResult;
  logins: number;
  /** Writes per successful login, by "VERB resource", and in all. */
  perLogin: Map<string, number>;
  writesPerLogin: number;
}

/** A login load, with the writes the backend received per successful login (counted until the records' last flush). */
async function storm(ctx: BenchContext, operation: RequestOperation, concurrency: number): Promise<Storm> {
  const writesBefore = await backendWrites(ctx);
  const loginsBefore = await successfulLogins(ctx);
  const result = await load(operation, concurrency, 0, STORM_MS);
  await sleep(FLUSH_WAIT_MS);
  const logins = (await successfulLogins(ctx)) - loginsBefore;
  const writesAfter = await backendWrites(ctx);
  const perLogin = new Map<string, number>();
  let total = 0;
  for (const [key, after] of writesAfter) {
    const delta = after - (writesBefore.get(key) ?? 0);
    if (delta > 0) {
      perLogin.set(key, delta / Math.max(logins, 1));
      total += delta;
    }
  }
  return { result, logins, perLogin, writesPerLogin: total / Math.max(logins, 1) };
}

function writesText(run: Storm): string {
  const parts = [...run.perLogin]
    .sort(([, a], [, b]) => b - a)
    .map(([key, value]) => `${key} ${value.toFixed(2)}`)
    .join(', ');
  return `${run.writesPerLogin.toFixed(2)} writes/login (${parts || 'none'})`;
}

function loginBody(username: string, password: string): string {
  return passwordGrantForm({ name: username, password });
}

function loginOperation(ctx: BenchContext, bodies: string[]): RequestOperation {
  return {
    kind: 'request',
    method: 'POST',
    url: `${ctx.kapi.url}/oauth/token`,
    headers: FORM,
    body: bodies[0]!,
    ...(bodies.length > 1 && { bodies }),
    expect: 200,
  };
}

/** The ClusterConfiguration kapi follows: the bench cluster's own, else the default kapi-system/kapi. */
function configurationOf(ctx: BenchContext): { namespace: string; name: string } {
  const [namespace, name] = (ctx.env.kapiEnv.KAPI_CLUSTER_CONFIGURATION ?? 'kapi-system/kapi').split('/');
  return { namespace: namespace!, name: name! };
}

interface Configuration {
  metadata: { generation?: number };
  status?: { conditions?: { type: string; status: string; observedGeneration?: number; message?: string }[] };
}

/**
 * Merges `authentication` into the ClusterConfiguration (created when missing) and waits until kapi reports it in
 * effect (Ready for this generation), as an operator would check it.
 */
async function configure(ctx: BenchContext, authentication: Record<string, unknown>): Promise<void> {
  const { namespace, name } = configurationOf(ctx);
  const path = `${ctx.env.backendUrl}${CONFIGURATIONS}/namespaces/${namespace}/clusterconfigurations/${name}`;
  const headers = ctx.env.adminHeaders;
  const current = await send(path, { headers });
  let generation: number | undefined;
  if (current.status === 404) {
    const created = await sendJson<Configuration>(
      `${ctx.env.backendUrl}${CONFIGURATIONS}/namespaces/${namespace}/clusterconfigurations`,
      {
        method: 'POST',
        expect: 201,
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'installer.kapi.io/v1alpha1',
          kind: 'ClusterConfiguration',
          metadata: { name },
          spec: {
            authentication: {
              oauth: { clients: [{ name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] }] },
              ...authentication,
            },
          },
        }),
      },
    );
    generation = created.metadata.generation;
  } else {
    const patched = await sendJson<Configuration>(path, {
      method: 'PATCH',
      headers: { ...headers, 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { authentication } }),
    });
    generation = patched.metadata.generation;
  }
  const deadline = Date.now() + 15_000;
  for (;;) {
    const object = await sendJson<Configuration>(path, { headers });
    const ready = object.status?.conditions?.find((condition) => condition.type === 'Ready');
    if (ready?.status === 'True' && (generation === undefined || ready.observedGeneration === generation)) return;
    if (Date.now() > deadline) {
      throw new Error(`kapi did not apply the ClusterConfiguration in 15 s: ${ready?.message ?? 'no Ready condition'}`);
    }
    await sleep(100);
  }
}

async function createUsers(ctx: BenchContext, prefix: string, count: number, password: string): Promise<string[]> {
  const hash = await bcrypt.hash(password, bcrypt.getRounds(ctx.env.loginUser.hash));
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${i}`;
    await sendJson(`${ctx.env.backendUrl}${USERS}`, {
      method: 'POST',
      expect: 201,
      headers: { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'iam.kapi.io/v1beta1',
        kind: 'User',
        metadata: { name, labels: { 'bench.kapi.io/row': 'accounts' } },
        spec: { email: `${name}@bench.kapi.test`, password: hash, groups: [] },
      }),
    });
    names.push(name);
  }
  return names;
}

async function deleteObject(ctx: BenchContext, path: string): Promise<void> {
  await send(`${ctx.env.backendUrl}${path}`, { method: 'DELETE', headers: ctx.env.adminHeaders }).catch(
    () => undefined,
  );
}

/** Records off, then on: the same load twice. */
/** What login records wrote in a run: the LoginHistory writes, and the most one write per user per flush allows. */
function recordWrites(run: Storm, users: number): { writes: number; bound: number } {
  let perLogin = 0;
  for (const [key, value] of run.perLogin) if (key.endsWith(' loginhistories')) perLogin += value;
  const flushes = Math.ceil((STORM_MS + FLUSH_WAIT_MS) / 2_000);
  return { writes: Math.round(perLogin * Math.max(run.logins, 1)), bound: users * (flushes + 1) };
}

async function offAndOn(
  ctx: BenchContext,
  operation: RequestOperation,
  concurrency: number,
  users: number,
): Promise<{ off: Storm; on: Storm; users: number }> {
  await configure(ctx, { loginRecords: { enabled: false } });
  // Unmeasured, with records off: a user already at its session cap (20), so both runs end the oldest session at
  // each login alike; then the records of earlier logins are surely flushed before counting starts.
  const warmUp = await load(operation, concurrency, 0, 1_000);
  for (let done = warmUp.latenciesNs.length; users === 1 && done < 24; done++) {
    await send(operation.url, { method: 'POST', headers: FORM, body: operation.body });
  }
  await sleep(FLUSH_WAIT_MS);
  const off = await storm(ctx, operation, concurrency);
  await configure(ctx, { loginRecords: { enabled: true } });
  const on = await storm(ctx, operation, concurrency);
  return { off, on, users };
}

/** Whether the records' writes stayed within one per user per flush, and no login failed. */
function offOnVerdict(run: { off: Storm; on: Storm; users: number }): boolean {
  const records = recordWrites(run.on, run.users);
  return records.writes <= records.bound && !run.off.result.errors && !run.on.result.errors;
}

function offOnLine(label: string, concurrency: number, { off, on }: { off: Storm; on: Storm; users: number }): string {
  const side = (name: string, run: Storm) =>
    `records ${name}: ${rate(throughput(run.result), 'logins/s')}, ${formatSummary(summarize(run.result.latenciesNs))}${cpuNote(run.result, 'login')}${errorNote(run.result)}; ${writesText(run)}`;
  return `${label} c${concurrency}\n    ${side('off', off)}\n    ${side('on', on)}`;
}

function offOnValue({ off, on, users }: { off: Storm; on: Storm; users: number }): string {
  const records = recordWrites(on, users);
  const errors = off.result.errors + on.result.errors;
  return `${rate(throughput(off.result), '/s')} → ${rate(throughput(on.result), '/s')}; writes/login ${off.writesPerLogin.toFixed(2)} → ${on.writesPerLogin.toFixed(2)}; records ${records.writes} writes for ${on.logins} logins (bound ${records.bound})${errors ? `, ${errors} errors` : ''}`;
}

async function directoryStorm(ctx: BenchContext, concurrency: number): Promise<Storm> {
  const { namespace } = configurationOf(ctx);
  const directory = await startDirectory();
  const secret = `bench-ldap-${randomBytes(3).toString('hex')}`;
  const uid = `bench-ldap-${randomBytes(3).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  const cpuBefore = accountedCpu();
  try {
    const userDN = await directory.addUser({ uid, password, mail: `${uid}@bench.kapi.test` });
    await directory.addGroup(`${uid}-team`, [userDN]);
    const data = { password: directory.servicePassword, 'ca.crt': directory.slapd.caPem };
    await sendJson(`${ctx.env.backendUrl}/api/v1/namespaces/${namespace}/secrets`, {
      method: 'POST',
      expect: 201,
      headers: { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        metadata: { name: secret },
        type: 'Opaque',
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      }),
    });
    await configure(ctx, {
      loginRecords: { enabled: true },
      identityProviders: [
        {
          name: 'bench-ldap',
          type: 'LDAP',
          mappingMethod: 'auto',
          ldap: directory.providerSettings({ bindPassword: secret, ca: secret }),
        },
      ],
    });
    const operation = loginOperation(ctx, [loginBody(uid, password)]);
    // The first login creates the linked User: not part of the storm.
    await sendJson(operation.url, { method: 'POST', headers: FORM, body: operation.body });
    accountCpuOf({ ...cpuBefore, slapd: directory.slapd.pid });
    const run = await storm(ctx, operation, concurrency);
    return run;
  } finally {
    accountCpuOf(cpuBefore);
    await configure(ctx, { identityProviders: [] }).catch((error: unknown) => detail(`WARNING: ${String(error)}`));
    await deleteObject(ctx, `/api/v1/namespaces/${namespace}/secrets/${secret}`);
    await deleteObject(ctx, `${USERS}/${uid}`);
    await deleteObject(ctx, `${HISTORIES}/${uid}`);
    await directory.stop({ remove: true });
  }
}

export const accountsScenario: Scenario = {
  title: 'Accounts: directory logins, and password logins with login records off and on (writes per login)',
  planned: Object.values(accountsMetrics),
  async run(ctx) {
    const concurrency = ctx.cores * 2;
    const rows: Row[] = [];
    const figures: Record<string, unknown> = {};
    try {
      const ldap = await directoryStorm(ctx, concurrency);
      const summary = summarize(ldap.result.latenciesNs);
      detail(
        `directory logins c${concurrency} (slapd over ldaps, search + user bind + group search each): ${rate(throughput(ldap.result), 'logins/s')}, ${formatSummary(summary)}${cpuNote(ldap.result, 'login')}${errorNote(ldap.result)}; ${writesText(ldap)}`,
      );
      rows.push({
        ...accountsMetrics.directory,
        value: `${rate(throughput(ldap.result), 'logins/s')} c${concurrency}, p99 ${ms(summary.p99)}; ${ldap.writesPerLogin.toFixed(2)} writes/login${ldap.result.errors ? `, ${ldap.result.errors} errors` : ''}`,
        verdict: ldap.result.errors === 0 ? 'info' : 'MISS',
      });
      figures.directory = {
        concurrency,
        loginsPerSecond: throughput(ldap.result),
        latency: summary,
        errors: ldap.result.errors,
        cpuMs: ldap.result.cpuMs,
        logins: ldap.logins,
        writesPerLogin: Object.fromEntries(ldap.perLogin),
      };

      const one = await offAndOn(
        ctx,
        loginOperation(ctx, [loginBody(ctx.env.loginUser.name, ctx.env.loginUser.password)]),
        concurrency,
        1,
      );
      detail(offOnLine('one user, one address,', concurrency, one));
      rows.push({
        ...accountsMetrics.oneUser,
        value: offOnValue(one),
        verdict: verdict(offOnVerdict(one)),
      });

      const password = randomBytes(12).toString('base64url');
      const prefix = `bench-rush-${randomBytes(2).toString('hex')}`;
      let names: string[] = [];
      try {
        names = await createUsers(ctx, prefix, MANY_USERS, password);
        const many = await offAndOn(
          ctx,
          loginOperation(
            ctx,
            names.map((name) => loginBody(name, password)),
          ),
          concurrency,
          MANY_USERS,
        );
        detail(offOnLine(`${MANY_USERS} users in turn,`, concurrency, many));
        rows.push({
          ...accountsMetrics.manyUsers,
          value: offOnValue(many),
          verdict: verdict(offOnVerdict(many)),
        });
        const figuresOf = (run: Storm) => ({
          loginsPerSecond: throughput(run.result),
          latency: summarize(run.result.latenciesNs),
          errors: run.result.errors,
          cpuMs: run.result.cpuMs,
          logins: run.logins,
          writesPerLogin: Object.fromEntries(run.perLogin),
        });
        figures.oneUser = {
          concurrency,
          off: figuresOf(one.off),
          on: figuresOf(one.on),
          records: recordWrites(one.on, 1),
        };
        figures.manyUsers = {
          concurrency,
          users: MANY_USERS,
          off: figuresOf(many.off),
          on: figuresOf(many.on),
          records: recordWrites(many.on, MANY_USERS),
        };
      } finally {
        for (const name of names) {
          await deleteObject(ctx, `${USERS}/${name}`);
          await deleteObject(ctx, `${HISTORIES}/${name}`);
        }
      }
    } finally {
      await configure(ctx, { loginRecords: { enabled: true } }).catch(() => undefined);
    }
    return { rows, figures };
  },
};
