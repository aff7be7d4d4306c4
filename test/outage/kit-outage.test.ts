/**
 * Outages of the cluster beneath kapi, on a real kube-apiserver 1.32 and etcd (a kit of ../shared/kube of this
 * test's own, on ports no other suite uses, since its processes are killed and started again): kube-apiserver killed
 * and started again, then etcd stopped and started again. kapi answers 503 (never a 401 or a 500) while they are
 * gone, and is ready again once they are back — brought back by its probe of kube-apiserver's readiness, not at the
 * next step of its caches' backoff (the reflector tests prove that with a backoff longer than the test). A machine
 * without the kit skips it, saying why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { kitHome, startKit, type Kit } from '../../bench/kit.js';
import { startE2E, waitFor, type E2E } from '../e2e/harness.js';
import { KapiCaller } from '../e2e/identity-http.js';

const run = promisify(execFile);
const root = process.cwd();
const home = kitHome(root);
const PORT = Number(process.env.KAPI_OUTAGE_KIT_PORT ?? 16443);
const ETCD_PORT = Number(process.env.KAPI_OUTAGE_KIT_ETCD_PORT ?? 14379);
const PASSWORD = 'e2e-Outage-Passw0rd';

let kit: Kit | undefined;
let e2e: E2E;
const caller = new KapiCaller();

const suite = home ? describe : describe.skip;
if (!home) {
  console.warn('kit-outage: skipped, no kit.sh in $KUBE_KIT_DIR, ../shared/kube or /work/shared/kube');
}

beforeAll(async () => {
  if (!home) return;
  kit = await startKit({
    version: '1.32',
    home,
    dir: path.join(root, '.cache', 'kube-outage-1.32'),
    port: PORT,
    etcdPort: ETCD_PORT,
    extraArgs: '--kubelet-preferred-address-types=InternalIP',
  });
  process.env.KUBECONFIG = kit.kubeconfig;
  e2e = await startE2E();
}, 240_000);

afterAll(async () => {
  await e2e?.stop().catch(() => undefined);
  // RESET: the next run starts on an empty etcd (a deleted namespace stays Terminating for ever on a bare kit)
  if (kit) await run(path.join(kit.dir, 'stop.sh'), [], { env: { ...process.env, RESET: '1' } });
}, 120_000);

function pidOf(name: 'kube-apiserver' | 'etcd'): number {
  return Number(readFileSync(path.join(kit!.dir, 'run', `${name}.pid`), 'utf8').trim());
}

async function kill(name: 'kube-apiserver' | 'etcd'): Promise<void> {
  const pid = pidOf(name);
  process.kill(pid, 'SIGKILL');
  await waitFor(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}

/** start.sh starts what is not running and waits for kube-apiserver's /readyz. */
async function startAgain(): Promise<void> {
  await run(path.join(kit!.dir, 'start.sh'), [], {
    env: { ...process.env, KAS_EXTRA_ARGS: '--kubelet-preferred-address-types=InternalIP' },
  });
}

const kapi = () => e2e.kapiUrl;
const ready = async () => (await fetch(`${kapi()}/readyz`)).status === 200;

suite(
  `when the cluster beneath kapi goes away and comes back (kube-apiserver 1.32 kit${home ? '' : '; skipped: needs the kit of ../shared/kube'})`,
  () => {
    let token: string;

    /**
     * kapi is ready again (the figure printed: how long after kube-apiserver's own readiness) and its watch is live: a
     * node created now reaches its listing.
     */
    async function backAgain(what: string, nodeSuffix: string): Promise<void> {
      const lagMs = await waitFor(ready);
      console.info(`kit-outage: kapi ready ${lagMs} ms after kube-apiserver's own readiness (${what})`);
      const node = await e2e.createNode(nodeSuffix);
      await waitFor(async () => {
        const found = await caller.get<{ totalItems: number }>(
          `${kapi()}/kapis/resources.kapi.io/v1alpha3/nodes?names=${node}`,
          token,
        );
        return found.status === 200 && found.body.totalItems === 1;
      });
    }

    beforeAll(async () => {
      const user = await e2e.createUser('outage', PASSWORD);
      await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes', 'namespaces'], verbs: ['get', 'list', 'watch'] }]);
      token = (await caller.login(kapi(), user, PASSWORD)).access_token;
    });

    it('then, with kube-apiserver killed, callers get 503 Status (not 401, not 500), /readyz fails once its caches are stale, and kapi is ready again once kube-apiserver is back', async () => {
      await kill('kube-apiserver');
      const forwarded = await caller.get(`${kapi()}/api/v1/namespaces/${e2e.runId}`, token);
      expect(forwarded.status).toBe(503);
      expect(forwarded.body).toMatchObject({ kind: 'Status', code: 503 });
      // a listing comes from kapi's cache, but its authorization is kube-apiserver's (a SubjectAccessReview, cached
      // briefly): answered from a cached decision, or kapi's 503
      const listing = await caller.get(`${kapi()}/kapis/resources.kapi.io/v1alpha3/nodes?limit=1`, token);
      expect([200, 503]).toContain(listing.status);

      // long enough for kapi's caches to turn stale (30 s) and /readyz to fail, and for their backoff to have grown
      await waitFor(async () => !(await ready()));
      const notReady = await (await fetch(`${kapi()}/readyz?verbose`)).text();
      expect(notReady).toMatch(/\[-\]cache:\S+ failed: not kept current/);

      await startAgain();
      // kube-apiserver is ready (start.sh waited for it); kapi follows at its next readiness probe
      await backAgain('a restart', 'after-restart');
      expect((await caller.get(`${kapi()}/api/v1/namespaces/${e2e.runId}`, token)).status).toBe(200);
    }, 120_000);

    it('then, with etcd stopped, forwarded requests are a 503 or 504 Status from kube-apiserver (never kapi’s 401 or 500), and all is well once etcd is back', async () => {
      await kill('etcd');
      const answer = await caller.get(`${kapi()}/api/v1/namespaces/${e2e.runId}`, token);
      // kube-apiserver's own answer to a read it cannot make (its watch cache may still serve it: 200)
      expect([200, 500, 503, 504]).toContain(answer.status);
      expect(answer.status).not.toBe(401);

      await startAgain();
      await backAgain('etcd back', 'after-etcd');
    }, 120_000);
  },
);
