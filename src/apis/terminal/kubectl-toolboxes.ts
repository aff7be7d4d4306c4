import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { Logger } from '../../observability/logger.js';
import { ApiError, NotFoundError, ServiceUnavailableError } from '../../server/errors.js';
import {
  TOOLBOX_CONTAINER,
  toolboxPod,
  toolboxPodName,
  toolboxState,
  type ToolboxSettings,
  type ToolboxUser,
} from './kubectl-toolbox.js';

/** How long the console's kubectl call waits for the pod to run (an image pull on first use). */
const START_DEADLINE_MS = 60_000;
const POLL_MS = 500;

export interface ToolboxPod {
  namespace: string;
  pod: string;
  container: string;
}

/**
 * Each user's kubectl pod, made with kapi's own credentials in kapi's namespace (the chart grants pods there only):
 * made on the first call, replaced when it is not the user's current one, waited for until it runs.
 */
export class KubectlToolboxes {
  constructor(
    private readonly client: KubeClient,
    private readonly settings: () => ToolboxSettings,
    /** The User object's uid (the pod's owner), from the watched users; undefined: no such user. */
    private readonly uidOf: (username: string) => Promise<string | undefined>,
    private readonly logger: Logger,
  ) {}

  get namespace(): string {
    return this.settings().namespace;
  }

  /** The settings the terminal needs to open a user's shell (kapi's address and CA as they are now). */
  current(): ToolboxSettings {
    return this.settings();
  }

  /**
   * The uid of the user's own pod when it runs now (read from kube-apiserver: it may be seconds old), else undefined.
   * The terminal asks again before it sends the token: the pod it opened must still be that one.
   */
  async runningPodUid(username: string): Promise<string | undefined> {
    const uid = await this.uidOf(username);
    if (!uid) return undefined;
    const settings = this.settings();
    const pod = (await this.read(
      `/api/v1/namespaces/${encodeURIComponent(settings.namespace)}/pods/${encodeURIComponent(toolboxPodName(username))}`,
    )) as { metadata?: { uid?: string } } | undefined;
    if (pod === undefined || toolboxState(pod, settings, { username, uid }).state !== 'running') return undefined;
    return pod.metadata?.uid;
  }

  /** The user's running pod: made or replaced as needed; a 503 when it does not run by the deadline. */
  async ensure(username: string, signal?: AbortSignal): Promise<ToolboxPod> {
    const uid = await this.uidOf(username);
    if (!uid)
      throw new NotFoundError(`user "${username}" not found`, { name: username, group: 'iam.kapi.io', kind: 'users' });
    const user: ToolboxUser = { username, uid };
    const settings = this.settings();
    const name = toolboxPodName(user.username);
    const path = `/api/v1/namespaces/${encodeURIComponent(settings.namespace)}/pods`;
    const deadline = Date.now() + START_DEADLINE_MS;
    let reason = 'Pending';
    let made = false;
    while (Date.now() < deadline && !signal?.aborted) {
      const pod = (await this.read(`${path}/${name}`)) as { metadata?: { uid?: string } } | undefined;
      const state = pod === undefined ? undefined : toolboxState(pod, settings, user);
      if (state?.state === 'running') return { namespace: settings.namespace, pod: name, container: TOOLBOX_CONTAINER };
      if (state?.state === 'foreign')
        throw new ApiError(409, 'AlreadyExists', `pods "${name}" already exists and was not made by kapi`, {
          name,
          group: '',
          kind: 'pods',
        });
      if (state?.state === 'starting') reason = state.reason;
      else if (state?.state === 'replace') {
        // that very pod only (another replica may have made the new one meanwhile)
        const preconditions = { uid: pod?.metadata?.uid };
        await this.call(() =>
          this.client.request({
            method: 'DELETE',
            path: `${path}/${name}`,
            body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions },
          }),
        );
      } else {
        if (!made) this.logger.info('kubectl toolbox pod made', { user: user.username, pod: name });
        made = true;
        await this.call(() => this.client.request({ method: 'POST', path, body: toolboxPod(settings, user) }));
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new ServiceUnavailableError(
      `the kubectl pod ${settings.namespace}/${name} is not running yet (${reason})`,
      5,
    );
  }

  private async read(path: string): Promise<unknown> {
    try {
      return await this.client.request({ path });
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 404) return undefined;
      throw unavailable(error);
    }
  }

  /** A write whose 404 or 409 (the pod went or came meanwhile) is left to the next look. */
  private async call(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (error instanceof KubeApiError && (error.code === 404 || error.code === 409)) return;
      throw unavailable(error);
    }
  }
}

/** kapi's own write refused or the cluster unreachable: kapi's fault, never the caller's. */
function unavailable(error: unknown): ServiceUnavailableError {
  const message = error instanceof KubeApiError ? error.message : String(error);
  return new ServiceUnavailableError(`kapi cannot manage the kubectl pod now: ${message}`, 5);
}
