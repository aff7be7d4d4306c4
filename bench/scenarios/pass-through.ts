import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { BenchContext } from '../context.js';
import { bearer, describeAnswer, passwordGrant, send } from '../http.js';
import type { LoadResult, Operation } from '../jobs.js';
import { startKapiProcess } from '../kapi-process.js';
import { pairedRuns } from '../paired-runs.js';
import { accountCpuOf, accountedCpu, cpuNote, cpuPerOperation, errorNote, load, throughput } from '../measure.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, rate, signedMs, summarize } from '../stats.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ROLE = 'kapi (pass-through)';
const KAS = 'kube-apiserver';
/** SPEC §11: kube-apiserver's own CPU through kapi within 5 % of direct when tokens are passed through. */
export const PASS_THROUGH_KUBE_APISERVER_EXTRA = 0.05;
const READY_MS = 120_000;
/** kube-apiserver fetches a new issuer's discovery on its own schedule (every 10 s until it succeeds). */
const ACCEPTED_WITHIN_MS = 60_000;

const us = (value: number | undefined) =>
  value !== undefined && Number.isFinite(value) ? `${Math.round(value)} µs` : 'n/a';

export interface PassThroughInput {
  path: string;
  direct: Operation;
  /** The bare proxy's CPU per GET (c1, c16), for kapi's own share in this mode too. */
  bare?: { c1: number; c16: number };
}

/**
 * Token pass-through on the bench's kit (SPEC §5, §11): a second kapi at the issuer URL kube-apiserver trusts, signing
 * with the RSA key it verifies, forwards the bench user's own token; kube-apiserver's CPU per GET through it against
 * direct (≤ +5 %), and that kapi's own CPU per GET. Runs alternate direct and through kapi, median of RUNS, as the
 * impersonating rows do.
 */
export async function passThroughRows(ctx: BenchContext, input: PassThroughInput): Promise<Row[]> {
  const issuer = ctx.env.issuer;
  if (!issuer) return [];
  const namespace = ctx.env.kapiEnv.KAPI_SIGNING_KEY_SECRET?.split('/')[0];
  if (!namespace) return [];
  const admin = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  const secretPath = `/api/v1/namespaces/${namespace}/secrets`;
  const created = await send(`${ctx.env.backendUrl}${secretPath}`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({
      metadata: { name: 'kapi-jwt-rs' },
      type: 'Opaque',
      data: {
        'rs.pem': readFileSync(path.join(issuer.dir, 'signing.pem')).toString('base64'),
        active: Buffer.from('rs').toString('base64'),
      },
    }),
  });
  if (created.status !== 201 && created.status !== 409) throw new Error(`signing key: ${describeAnswer(created)}`);
  const kapi = await startKapiProcess({
    kubeconfig: ctx.env.kubeconfig,
    root: ROOT,
    env: {
      ...ctx.env.kapiEnv,
      KAPI_SIGNING_KEY_SECRET: `${namespace}/kapi-jwt-rs`,
      KAPI_ISSUER_URL: issuer.url,
      TLS_PORT: new URL(issuer.url).port,
      TLS_CERT_FILE: path.join(issuer.dir, 'tls.crt'),
      TLS_KEY_FILE: path.join(issuer.dir, 'tls.key'),
    },
  });
  const before = accountedCpu();
  try {
    await kapi.ready(READY_MS);
    const token = await passwordGrant(kapi.url, ctx.env.kapiUser);
    const through: Operation = {
      kind: 'request',
      url: `${kapi.url}${input.path}`,
      headers: bearer(token),
      expect: 200,
    };
    // kapi asks kube-apiserver (a TokenReview) at its first request, then every minute: the first answer must be yes
    const started = Date.now();
    while (!(await reviewedByKube(ctx, token))) {
      if (Date.now() - started > ACCEPTED_WITHIN_MS) throw new Error('kube-apiserver never accepted kapi’s token');
      await sleep(500);
    }
    while (!(await passingThrough(kapi.metricsUrl))) {
      if (Date.now() - started > ACCEPTED_WITHIN_MS + 70_000) throw new Error('kapi never turned pass-through on');
      await send(through.url, { headers: bearer(token) });
      await sleep(200);
    }
    detail(`token pass-through on after ${((Date.now() - started) / 1000).toFixed(1)} s (kapi at ${issuer.url})`);
    accountCpuOf({ ...before, [ROLE]: kapi.pid });
    await load(through, 16, 0, 3_000);
    const measure = async (concurrency: number) => {
      const median = await pairedRuns(input.direct, through, concurrency, { role: ROLE, paced: true });
      const paced = median.paced!;
      const line = (what: string, result: LoadResult) =>
        detail(
          `${what.padEnd(26)} c${concurrency}: ${rate(throughput(result))}, ${formatSummary(summarize(result.latenciesNs))}${cpuNote(result)}${errorNote(result)}`,
        );
      line('pass-through', median.through);
      line('direct', median.direct);
      line('direct, paced alike', paced);
      const kubeOf = (result: LoadResult) => cpuPerOperation(result)[KAS] ?? Number.NaN;
      return {
        kapi: median.cost,
        kubeThrough: kubeOf(median.through),
        kubeDirect: kubeOf(median.direct),
        kubePaced: kubeOf(paced),
        added: summarize(median.through.latenciesNs).p50 - summarize(median.direct.latenciesNs).p50,
        errors: median.throughErrors,
      };
    };
    const c1 = await measure(1);
    const c16 = await measure(16);
    const percent = (value: number) => `${value >= 0 ? '+' : ''}${Math.round(value * 100)} %`;
    const clean = c1.errors + c16.errors === 0;
    const share = (kapiUs: number, bareUs: number | undefined) => (bareUs ? `${(kapiUs / bareUs).toFixed(2)}×` : 'n/a');
    const extra = (through: number, direct: number) => through / direct - 1;
    const paced1 = extra(c1.kubeThrough, c1.kubePaced);
    const paced16 = extra(c16.kubeThrough, c16.kubePaced);
    return [
      {
        metric: 'forwarding, token pass-through: kube-apiserver CPU per GET through kapi vs direct paced alike',
        value: `${percent(paced1)} @c1 (${us(c1.kubeThrough)} vs ${us(c1.kubePaced)}), ${percent(paced16)} @c16 (${us(c16.kubeThrough)} vs ${us(c16.kubePaced)})`,
        target: `≤ +${Math.round(PASS_THROUGH_KUBE_APISERVER_EXTRA * 100)} % at both`,
        verdict: verdict(
          clean && paced1 <= PASS_THROUGH_KUBE_APISERVER_EXTRA && paced16 <= PASS_THROUGH_KUBE_APISERVER_EXTRA,
        ),
      },
      {
        metric: 'forwarding, token pass-through: kube-apiserver CPU per GET through kapi vs direct at full pace',
        value: `${percent(extra(c1.kubeThrough, c1.kubeDirect))} @c1 (${us(c1.kubeDirect)} direct), ${percent(extra(c16.kubeThrough, c16.kubeDirect))} @c16 (${us(c16.kubeDirect)} direct)`,
        target: '(info: includes what pacing alone costs)',
        verdict: 'info',
      },
      {
        metric: 'forwarding, token pass-through: kapi CPU per GET, and ÷ the bare proxy’s',
        value: `${us(c1.kapi)} at c1 (${share(c1.kapi, input.bare?.c1)}), ${us(c16.kapi)} at c16 (${share(c16.kapi, input.bare?.c16)}); added p50 @c1 ${signedMs(c1.added)}`,
        target: '(info)',
        verdict: clean ? 'info' : 'MISS',
      },
    ];
  } finally {
    accountCpuOf(before);
    await kapi.stop();
    await send(`${ctx.env.backendUrl}${secretPath}/kapi-jwt-rs`, { method: 'DELETE', headers: admin });
  }
}

/** Whether kube-apiserver itself authenticates `token` (a TokenReview as the bench's admin). */
async function reviewedByKube(ctx: BenchContext, token: string): Promise<boolean> {
  const answer = await send(`${ctx.env.backendUrl}/apis/authentication.k8s.io/v1/tokenreviews`, {
    method: 'POST',
    headers: { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
  });
  if (answer.status !== 201 && answer.status !== 200) throw new Error(`TokenReview: ${describeAnswer(answer)}`);
  return (
    (JSON.parse(answer.body.toString('utf8')) as { status?: { authenticated?: boolean } }).status?.authenticated ===
    true
  );
}

async function passingThrough(metricsUrl: string): Promise<boolean> {
  const answer = await send(metricsUrl);
  return /^kapi_token_pass_through\{state="accepted"\} 1$/m.test(answer.body.toString('utf8'));
}
