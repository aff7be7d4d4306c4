import { KubeApiError, type KubeClient } from '../kube/client.js';
import { describeError } from '../kube/cache-health.js';
import type { Logger } from '../observability/logger.js';
import {
  GUARD_API_VERSIONS,
  GUARD_NAME,
  exemptUsersOf,
  guardDrift,
  same,
  guardObjects,
  type GuardApiVersion,
} from './policy.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/**
 * Whether kube-apiserver guards the tenant fields (SPEC §18), and what kapi's controller may trust: `guarded` when
 * kapi's ValidatingAdmissionPolicy and its binding are in the cluster as kapi makes them; `unguarded` (with why)
 * otherwise. Unguarded, the controller only takes grants away (controllers/platform-rbac), so a field written
 * straight to kube-apiserver never becomes a grant.
 */
export type GuardState =
  { state: 'guarded'; version: GuardApiVersion } | { state: 'unguarded'; reason: string; version?: GuardApiVersion };

const GROUP_PATH = '/apis/admissionregistration.k8s.io';
const TIMEOUT_MS = 10_000;
/** How often the guard is looked at again (a deleted or edited policy is put back, or reported). */
const RECHECK_MS = 30_000;
/** How often a guard in place is probed for being enforced too. */
const ENFORCEMENT_PROBE_MS = 10 * 60_000;
/** The user a probe of the guard's enforcement impersonates (with system:masters: RBAC lets it do anything). */
const PROBE_USER = 'system:kapi:tenant-guard-probe';
/** How long a replica that just exempted itself waits for kube-apiserver to apply it. */
const EXEMPTION_WAIT_MS = 10_000;

/** How many times a write of the guard that met another replica's (409) is made again, in one look. */
const CONFLICT_ATTEMPTS = 5;

class WriteConflict extends Error {
  constructor(readonly conflict: KubeApiError) {
    super(conflict.message);
  }
}

/** The newest policy version kube-apiserver serves (pure, over `/apis/admissionregistration.k8s.io/<v>` lists). */
export function servedGuardVersion(served: ReadonlyMap<string, readonly string[]>): GuardApiVersion | undefined {
  return GUARD_API_VERSIONS.find((version) => {
    const resources = served.get(version) ?? [];
    return resources.includes('validatingadmissionpolicies') && resources.includes('validatingadmissionpolicybindings');
  });
}

/** The user name in a ServiceAccount token (its `sub`), read without verifying: it is kapi's own token. */
export function tokenSubject(authorization: string | undefined): string | undefined {
  const token = authorization?.replace(/^Bearer\s+/i, '');
  const payload = token?.split('.')[1];
  if (!payload) return undefined;
  try {
    const sub = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))?.sub;
    return typeof sub === 'string' && sub.startsWith('system:serviceaccount:') ? sub : undefined;
  } catch {
    return undefined;
  }
}

export interface GuardKeeperOptions {
  client: KubeClient;
  logger: Logger;
  recheckMs?: number;
}

/**
 * Keeps kapi's tenant guard in the cluster, on every replica (each must be exempt, whatever credentials it runs
 * with): finds the policy version kube-apiserver serves and the user this replica is, reads the policy and binding, and
 * makes or mends them where they are not kapi's or do not exempt it (the chart installs them; kapi running with the
 * rights to, as on a development cluster, installs them itself). What it could not make right, it reports: the state
 * is `unguarded` and says why.
 */
export class TenantGuardKeeper {
  private current: GuardState = { state: 'unguarded', reason: 'not looked at yet' };
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private username: string | undefined;
  private probedAt = 0;
  private readonly log: Logger;
  private readonly listeners = new Set<(state: GuardState) => void>();

  constructor(private readonly options: GuardKeeperOptions) {
    this.log = options.logger.child({ component: 'tenant-guard' });
  }

  get state(): GuardState {
    return this.current;
  }

  /** Told whenever the state changes (the controller passes again). */
  onChange(listener: (state: GuardState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    this.check();
  }

  /** Looks at the guard again now (one look at a time). */
  check(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (!this.running) {
      this.running = this.look().finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.check(), this.options.recheckMs ?? RECHECK_MS);
        this.timer.unref?.();
      });
    }
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private set(state: GuardState): void {
    const before = this.current;
    this.current = state;
    if (same(before, state)) return;
    if (state.state === 'guarded')
      this.log.info('tenant guard in place: kube-apiserver checks every writer of the tenant fields', {
        policy: GUARD_NAME,
        version: state.version,
      });
    else
      this.log.error(
        'tenant guard missing: workspace and platform-role grants are only taken away until it is in place',
        { policy: GUARD_NAME, reason: state.reason },
      );
    for (const listener of [...this.listeners]) listener(state);
  }

  private async look(): Promise<void> {
    try {
      this.set(await this.ensure());
    } catch (error) {
      this.set({ state: 'unguarded', reason: `the cluster could not be asked: ${describeError(error)}` });
    }
  }

  /**
   * Replicas starting together each add themselves to the exempt users: a write that lost such a race (409) is made
   * again over what the other stored, rather than reporting the guard missing until the next look.
   */
  private async ensure(): Promise<GuardState> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ensureOnce();
      } catch (error) {
        if (!(error instanceof WriteConflict)) throw error;
        if (attempt >= CONFLICT_ATTEMPTS)
          return { state: 'unguarded', reason: `other writers kept changing it: ${describeError(error.conflict)}` };
      }
    }
  }

  private async ensureOnce(): Promise<GuardState> {
    const { client } = this.options;
    const version = servedGuardVersion(await this.servedResources());
    if (!version)
      return {
        state: 'unguarded',
        reason:
          'kube-apiserver serves no ValidatingAdmissionPolicy (GA in 1.30; on 1.26 to 1.29 enable the ' +
          'ValidatingAdmissionPolicy feature gate and its admissionregistration.k8s.io API version)',
      };
    this.username ??= await this.whoAmI();
    if (!this.username)
      return { state: 'unguarded', version, reason: 'kapi could not tell which user it is to kube-apiserver' };
    const base = `${GROUP_PATH}/${version}`;
    const read = (resource: string) =>
      client
        .request<Raw>({ path: `${base}/${resource}/${GUARD_NAME}`, timeoutMs: TIMEOUT_MS })
        .catch((error: unknown) => {
          if (error instanceof KubeApiError && error.code === 404) return undefined;
          throw error;
        });
    let policy = await read('validatingadmissionpolicies');
    let binding = await read('validatingadmissionpolicybindings');
    // the users it exempts: those it names (other replicas' credentials), and this one
    const expected = guardObjects(version, { kapiUsernames: [...exemptUsersOf(policy), this.username] });
    const drift = guardDrift(expected, policy, binding);
    if (drift.length === 0) return this.enforcedOrNot(version);
    try {
      policy = await this.write(`${base}/validatingadmissionpolicies`, expected.policy, policy);
      binding = await this.write(`${base}/validatingadmissionpolicybindings`, expected.binding, binding);
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 409) throw new WriteConflict(error);
      return {
        state: 'unguarded',
        version,
        reason: `${drift.join('; ')}, and kapi could not put it right: ${describeError(error)}`,
      };
    }
    this.log.warn('tenant guard put in place', { policy: GUARD_NAME, version, was: drift.join('; ') });
    const left = guardDrift(expected, policy, binding);
    if (left.length > 0) return { state: 'unguarded', version, reason: left.join('; ') };
    await this.untilExempt();
    return this.enforcedOrNot(version);
  }

  /**
   * Whether kube-apiserver enforces the policy it holds (its admission plugin may be off): a write the guard refuses
   * to anyone but kapi (a login session, dry run), made as a user kube-apiserver's RBAC lets do anything, must be
   * refused by the guard. Where admission has no authorizer (v1alpha1) system:masters passes the guard, so nothing is
   * asked there; a probe that tells nothing (impersonation refused) leaves the policy taken at its word.
   */
  private async enforcedOrNot(version: GuardApiVersion): Promise<GuardState> {
    if (version === 'v1alpha1') return { state: 'guarded', version };
    // asked when the guard was not in place before, and now and then (the plugin is turned off rarely)
    if (this.current.state === 'guarded' && Date.now() - this.probedAt < ENFORCEMENT_PROBE_MS)
      return { state: 'guarded', version };
    this.probedAt = Date.now();
    try {
      await this.options.client.request({
        method: 'POST',
        path: '/apis/iam.kapi.io/v1beta1/loginsessions',
        query: { dryRun: 'All' },
        headers: { 'Impersonate-User': PROBE_USER, 'Impersonate-Group': ['system:masters', 'system:authenticated'] },
        body: this.probeSession(),
        timeoutMs: TIMEOUT_MS,
      });
      return {
        state: 'unguarded',
        version,
        reason:
          'kube-apiserver holds the policy but does not enforce it (is its ValidatingAdmissionPolicy admission ' +
          'plugin, or feature gate, off?)',
      };
    } catch (error) {
      if (!(error instanceof KubeApiError && error.code === 403 && error.message.includes(GUARD_NAME)))
        this.log.debug('the tenant guard’s enforcement could not be probed', { error: describeError(error) });
      return { state: 'guarded', version };
    }
  }

  private probeSession() {
    return {
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'LoginSession',
      metadata: { generateName: 'kapi-tenant-guard-probe-' },
      spec: {
        username: 'kapi-tenant-guard-probe',
        clientId: 'kapi',
        expiresAt: new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        refreshTokenId: 'probe',
      },
    };
  }

  /**
   * kube-apiserver applies a changed policy a moment after storing it (its admission reads policies through a watch):
   * until a write only kapi may make (a login session, dry run) passes, this replica is not yet exempt. Bounded.
   */
  private async untilExempt(): Promise<void> {
    const deadline = Date.now() + EXEMPTION_WAIT_MS;
    const probe = this.probeSession();
    while (!this.stopped && Date.now() < deadline) {
      try {
        await this.options.client.request({
          method: 'POST',
          path: '/apis/iam.kapi.io/v1beta1/loginsessions',
          query: { dryRun: 'All' },
          body: probe,
          timeoutMs: TIMEOUT_MS,
        });
        return;
      } catch (error) {
        const byGuard = error instanceof KubeApiError && error.code === 403 && error.message.includes(GUARD_NAME);
        if (!byGuard) return; // not the guard's refusal: nothing to wait for here
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Creates or replaces one object of the guard; answers what the cluster stored. */
  private async write(collection: string, wanted: Record<string, unknown>, existing: Raw): Promise<Raw> {
    const name = GUARD_NAME;
    if (!existing)
      return this.options.client.request({ method: 'POST', path: collection, body: wanted, timeoutMs: TIMEOUT_MS });
    // whoever installed it (the chart, helm's own labels and annotations) keeps its metadata; kapi sets the spec and
    // the users it exempts
    const want = wanted.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
    const body = {
      ...wanted,
      metadata: {
        ...existing.metadata,
        labels: { ...want.labels, ...existing.metadata?.labels },
        annotations: { ...existing.metadata?.annotations, ...want.annotations },
        resourceVersion: existing.metadata?.resourceVersion,
      },
    };
    return this.options.client.request({
      method: 'PUT',
      path: `${collection}/${name}`,
      body,
      timeoutMs: TIMEOUT_MS,
    });
  }

  private async servedResources(): Promise<Map<string, string[]>> {
    const served = new Map<string, string[]>();
    const group = await this.options.client
      .request<Raw>({ path: GROUP_PATH, timeoutMs: TIMEOUT_MS })
      .catch((error: unknown) => {
        if (error instanceof KubeApiError && error.code === 404) return undefined;
        throw error;
      });
    for (const entry of group?.versions ?? []) {
      const version = entry?.version;
      if (typeof version !== 'string' || !(GUARD_API_VERSIONS as readonly string[]).includes(version)) continue;
      const list = await this.options.client.request<Raw>({ path: `${GROUP_PATH}/${version}`, timeoutMs: TIMEOUT_MS });
      served.set(
        version,
        (list?.resources ?? []).map((resource: Raw) => String(resource?.name)),
      );
    }
    return served;
  }

  /** The user kapi is to kube-apiserver: a SelfSubjectReview, else its ServiceAccount token's subject. */
  private async whoAmI(): Promise<string | undefined> {
    const { client } = this.options;
    for (const version of ['v1', 'v1beta1', 'v1alpha1']) {
      try {
        const review = await client.request<Raw>({
          method: 'POST',
          path: `/apis/authentication.k8s.io/${version}/selfsubjectreviews`,
          body: { apiVersion: `authentication.k8s.io/${version}`, kind: 'SelfSubjectReview' },
          timeoutMs: TIMEOUT_MS,
        });
        const username = review?.status?.userInfo?.username;
        if (typeof username === 'string' && username !== '') return username;
      } catch (error) {
        if (!(error instanceof KubeApiError && (error.code === 404 || error.code === 403))) throw error;
      }
    }
    const subject = tokenSubject((await client.connection.authHeaders()).Authorization);
    return subject;
  }
}
