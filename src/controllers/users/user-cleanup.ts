import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { USERNAME_LABEL, usernameLabelValue } from '../../auth/sessions/session-record.js';
import { passwordSecretName } from '../../auth/users/password-hashes.js';

/**
 * What a deleted user leaves that could pass to the next user of its name, and its removal (SPEC §17–18): a deleted
 * user's workspaces lose it as their manager (a new User of the name would be their admin at once), its bindings go
 * (platform role, cluster, workspace and project memberships: those labelled `iam.kapi.io/user-ref` with its name,
 * kapi's realizations excepted, which their controller removes), its login sessions end and its password Secret goes.
 * kapi's users API runs it in the same request as the deletion; for every other path (kubectl straight to
 * kube-apiserver), the finalizer `USER_FINALIZER` keeps the User until kapi's user controller has run it.
 */

export const USER_FINALIZER = 'finalizers.kapi.io/users';
export const USER_REF_LABEL = 'iam.kapi.io/user-ref';
const REALIZES_LABEL = 'iam.kapi.io/realizes';
const TIMEOUT_MS = 10_000;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const TEMPLATES_PATH = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
const RBAC_PATH = '/apis/rbac.authorization.k8s.io/v1';
const IAM_PATH = '/apis/iam.kapi.io/v1alpha2';
const SESSIONS_PATH = '/apis/iam.kapi.io/v1beta1/loginsessions';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** Workspaces (templates as listed) whose manager is `user` (pure). */
export function managedBy(templates: readonly Raw[], user: string): Raw[] {
  return templates.filter((template) => template?.spec?.template?.spec?.manager === user);
}

/** The JSON patch that takes the manager off a workspace, as it was read (a change in between fails the test). */
export function managerRemoval(template: Raw): unknown[] {
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: template?.metadata?.resourceVersion },
    { op: 'remove', path: '/spec/template/spec/manager' },
  ];
}

/** The JSON patch that takes kapi's finalizer off a User as read; undefined when it has none. */
export function finalizerRemoval(user: Raw): unknown[] | undefined {
  const finalizers: unknown[] = Array.isArray(user?.metadata?.finalizers) ? user.metadata.finalizers : [];
  const index = finalizers.indexOf(USER_FINALIZER);
  if (index < 0) return undefined;
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: user?.metadata?.resourceVersion },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ];
}

/** The JSON patch that puts kapi's finalizer on a User as read; undefined when it has it. */
export function finalizerAddition(user: Raw): unknown[] | undefined {
  const finalizers: unknown = user?.metadata?.finalizers;
  if (Array.isArray(finalizers) && finalizers.includes(USER_FINALIZER)) return undefined;
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: user?.metadata?.resourceVersion },
    Array.isArray(finalizers)
      ? { op: 'add', path: '/metadata/finalizers/-', value: USER_FINALIZER }
      : { op: 'add', path: '/metadata/finalizers', value: [USER_FINALIZER] },
  ];
}

const ignoreMissing = (error: unknown) => {
  if (!(error instanceof KubeApiError && error.code === 404)) throw error;
};

export interface CleanupOutcome {
  /** Workspaces whose manager it was. */
  workspaces: string[];
  bindings: number;
  sessions: number;
}

/**
 * Removes what the user left (see above), with kapi's client; `kapiNamespace` holds its password Secret. Idempotent:
 * what is gone already is skipped, so a replica killed midway and the next one running it again agree.
 */
export async function removeUserTraces(
  client: KubeClient,
  kapiNamespace: string,
  user: string,
): Promise<CleanupOutcome> {
  const list = (path: string, labelSelector?: string) =>
    client
      .request<{ items?: Raw[] }>({ path, ...(labelSelector && { query: { labelSelector } }), timeoutMs: TIMEOUT_MS })
      .then((answer) => answer?.items ?? []);
  const remove = (path: string) =>
    client.request({ method: 'DELETE', path, timeoutMs: TIMEOUT_MS }).catch(ignoreMissing);
  const patch = (path: string, body: unknown[]) =>
    client.request({ method: 'PATCH', path, contentType: 'application/json-patch+json', body, timeoutMs: TIMEOUT_MS });

  // the workspaces it managed lose their manager first: the realized admin grant follows the field
  const workspaces: string[] = [];
  for (const template of managedBy(await list(TEMPLATES_PATH), user)) {
    const name = String(template.metadata.name);
    const path = `${TEMPLATES_PATH}/${encodeURIComponent(name)}`;
    try {
      await patch(path, managerRemoval(template));
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 404) continue;
      if (!(error instanceof KubeApiError && (error.code === 409 || error.code === 422))) throw error;
      // changed since listed: read it again, once
      const fresh = await client.request<Raw>({ path, timeoutMs: TIMEOUT_MS }).catch(ignoreMissing);
      if (fresh?.spec?.template?.spec?.manager === user) await patch(path, managerRemoval(fresh));
    }
    workspaces.push(name);
  }

  // a name longer than a label value (kubectl may make one) has no bindings labelled with it
  const labelled = LABEL_VALUE.test(user);
  const selector = `${USER_REF_LABEL}=${user}`;
  const bindings = labelled
    ? [
        ...(await list(`${IAM_PATH}/workspacerolebindings`, selector)).map(
          (b) => `${IAM_PATH}/workspacerolebindings/${encodeURIComponent(b.metadata.name)}`,
        ),
        ...(await list(`${IAM_PATH}/globalrolebindings`, selector)).map(
          (b) => `${IAM_PATH}/globalrolebindings/${encodeURIComponent(b.metadata.name)}`,
        ),
        // its departments: a new user of the name must not be in them
        ...(await list(`${IAM_PATH}/groupbindings`, selector)).map(
          (b) => `${IAM_PATH}/groupbindings/${encodeURIComponent(b.metadata.name)}`,
        ),
        ...(await list(`${RBAC_PATH}/clusterrolebindings`, selector))
          .filter((b) => b?.metadata?.labels?.[REALIZES_LABEL] === undefined)
          .map((b) => `${RBAC_PATH}/clusterrolebindings/${encodeURIComponent(b.metadata.name)}`),
        ...(await list(`${RBAC_PATH}/rolebindings`, selector)).map(
          (b) =>
            `${RBAC_PATH}/namespaces/${encodeURIComponent(b.metadata.namespace)}/rolebindings/${encodeURIComponent(b.metadata.name)}`,
        ),
      ]
    : [];
  await Promise.all(bindings.map(remove));
  // memberships and platform roles that name the user without its label (made by hand): it leaves their subjects,
  // and a binding it was alone in goes (kapi's controller realizes these, so they would still grant the name)
  let unlabelled = 0;
  const notTheUser = (subject: Raw) => !(subject?.kind === 'User' && subject?.name === user);
  // each kind's list of whom it names: memberships' and platform roles' subjects, departments' users
  const namers: [string, 'subjects' | 'users', (entry: Raw) => boolean][] = [
    [`${IAM_PATH}/workspacerolebindings`, 'subjects', notTheUser],
    [`${IAM_PATH}/globalrolebindings`, 'subjects', notTheUser],
    [`${IAM_PATH}/groupbindings`, 'users', (name) => name !== user],
  ];
  for (const [path, field, keeps] of namers) {
    for (const binding of (await list(path)).filter((b) => b?.metadata?.labels?.[USER_REF_LABEL] !== user)) {
      const named: Raw[] = Array.isArray(binding?.[field]) ? binding[field] : [];
      const kept = named.filter(keeps);
      if (kept.length === named.length) continue;
      const at = `${path}/${encodeURIComponent(binding.metadata.name)}`;
      if (kept.length === 0) await remove(at);
      else
        await client
          .request({
            method: 'PATCH',
            path: at,
            contentType: 'application/merge-patch+json',
            body: { metadata: { resourceVersion: binding.metadata.resourceVersion }, [field]: kept },
            timeoutMs: TIMEOUT_MS,
          })
          .catch(ignoreMissing);
      unlabelled += 1;
    }
  }

  const sessions = (await list(SESSIONS_PATH, `${USERNAME_LABEL}=${usernameLabelValue(user)}`)).filter(
    (session) => session?.spec?.username === user,
  );
  await Promise.all(sessions.map((s) => remove(`${SESSIONS_PATH}/${encodeURIComponent(s.metadata.name)}`)));

  await remove(
    `/api/v1/namespaces/${encodeURIComponent(kapiNamespace)}/secrets/${encodeURIComponent(passwordSecretName(user))}`,
  );
  return { workspaces, bindings: bindings.length + unlabelled, sessions: sessions.length };
}

/** Whether a realized binding (as listed) still names the user: its controller has not caught up yet (pure). */
export function namesUser(binding: Raw, user: string): boolean {
  return (Array.isArray(binding?.subjects) ? binding.subjects : []).some(
    (subject: Raw) => subject?.kind === 'User' && subject?.name === user,
  );
}

/**
 * The realized RBAC bindings (kapi's controller's: platform roles, workspace roles) that still name the user. While
 * any does, the user's name stays taken (its User kept by the finalizer): a new user of the name would hold them.
 */
export async function realizedGrantsOf(client: KubeClient, user: string): Promise<string[]> {
  const list = (path: string) =>
    client
      .request<{ items?: Raw[] }>({ path, query: { labelSelector: REALIZES_LABEL }, timeoutMs: TIMEOUT_MS })
      .then((answer) => answer?.items ?? []);
  const [cluster, namespaced] = await Promise.all([
    list(`${RBAC_PATH}/clusterrolebindings`),
    list(`${RBAC_PATH}/rolebindings`),
  ]);
  return [...cluster, ...namespaced]
    .filter((binding) => namesUser(binding, user))
    .map((binding) => `${binding.metadata.namespace ? `${binding.metadata.namespace}/` : ''}${binding.metadata.name}`);
}
