import { createHash } from 'node:crypto';
import { stringify } from 'yaml';

/**
 * The console's kubectl toolbox, made safe (pure). KubeSphere runs each admin's kubectl in a pod of a shared
 * cluster-admin ServiceAccount; here each user's pod holds no credential at all (no ServiceAccount token, nothing
 * mounted), runs unprivileged, and the user's kubectl acts with the user's own token: kapi hands it to the shell on
 * the terminal's stdin when the terminal opens, with the tty's echo off, and it lives in that shell's environment
 * only. kubectl in the pod reaches the cluster through kapi, so what it may do is what the user may do.
 */

export const TOOLBOX_CONTAINER = 'kubectl';
/** The user a toolbox pod is for (annotation: any user name; the label is its hash, for selection). */
export const TOOLBOX_USER_ANNOTATION = 'kapi.io/kubectl-user';
export const TOOLBOX_USER_LABEL = 'kapi.io/kubectl-user-hash';
/** What marks a pod as kapi's kubectl pod: kapi replaces only these. */
const TOOLBOX_APP_LABEL = 'app.kubernetes.io/name';
const TOOLBOX_APP = 'kapi-kubectl';
/** What the pod was made from: a pod made for an older image or kapi address is replaced. */
export const TOOLBOX_SPEC_ANNOTATION = 'kapi.io/kubectl-toolbox-spec';
/** The shell's signal that echo is off and it reads the token: kapi sends it only then, and shows nothing before. */
export const TOOLBOX_READY = '\x1b]7770;kapi-toolbox-ready\x07';
const HOME = '/home/kubectl';

export interface ToolboxSettings {
  namespace: string;
  image: string;
  /** The https URL kubectl in the pod reaches kapi at. */
  kapiUrl: string;
  /** The CA of kapi's serving certificate, when kapi generated it (else the image's trust store verifies it). */
  caPem?: string;
  /** The name kapi's certificate is checked against when `kapiUrl` is an address. */
  tlsServerName?: string;
}

export interface ToolboxUser {
  username: string;
  /** The User object's uid: the pod is owned by it, so deleting the user deletes the pod. */
  uid: string;
}

const userHash = (username: string) => createHash('sha256').update(username).digest('hex').slice(0, 32);

/**
 * The pod's name: `kubectl-<user>` when the user's name is a DNS label, else `kubectl.<hash>`: a dot no label has, so
 * no user's plain name can make another's hashed one.
 */
export function toolboxPodName(username: string): string {
  const plain = `kubectl-${username}`;
  return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(username) && plain.length <= 63
    ? plain
    : `kubectl.${userHash(username)}`;
}

/** The pod's main process says what it is: a session's shell ends what an earlier one left only where it sees it. */
const POD_MARK = 'kapi-kubectl-pod';

/** What decides the pod's content, so that a changed setting replaces it (kapi's address is the session's). */
function specDigest(settings: ToolboxSettings): string {
  return createHash('sha256')
    .update(JSON.stringify([settings.image, settings.namespace]))
    .digest('hex')
    .slice(0, 16);
}

/** The user's kubectl pod: no credential, no privilege, a sleeping shell kapi execs into. */
export function toolboxPod(settings: ToolboxSettings, user: ToolboxUser): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: toolboxPodName(user.username),
      namespace: settings.namespace,
      labels: { [TOOLBOX_APP_LABEL]: TOOLBOX_APP, [TOOLBOX_USER_LABEL]: userHash(user.username) },
      annotations: { [TOOLBOX_USER_ANNOTATION]: user.username, [TOOLBOX_SPEC_ANNOTATION]: specDigest(settings) },
      ownerReferences: [
        {
          apiVersion: 'iam.kapi.io/v1beta1',
          kind: 'User',
          name: user.username,
          uid: user.uid,
          blockOwnerDeletion: false,
        },
      ],
    },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 5,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        fsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: TOOLBOX_CONTAINER,
          image: settings.image,
          // the shell waits; kapi's exec is the user's session
          command: ['/bin/sh', '-c', 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done', POD_MARK],
          env: [{ name: 'HOME', value: HOME }],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          resources: {
            requests: { cpu: '10m', memory: '32Mi' },
            limits: { cpu: '500m', memory: '256Mi', 'ephemeral-storage': '64Mi' },
          },
          volumeMounts: [
            { name: 'home', mountPath: HOME },
            { name: 'tmp', mountPath: '/tmp' },
          ],
        },
      ],
      volumes: [
        { name: 'home', emptyDir: { sizeLimit: '32Mi' } },
        { name: 'tmp', emptyDir: { sizeLimit: '32Mi' } },
      ],
    },
  };
}

type Raw = {
  metadata?: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: { kind?: string; uid?: string }[];
    deletionTimestamp?: string;
  };
  status?: { phase?: string; containerStatuses?: { name?: string; state?: Record<string, { reason?: string }> }[] };
};

/** Whether `pod` is this user's toolbox (made by kapi for this very User object, not a namesake made before). */
export function isToolboxOf(pod: unknown, user: ToolboxUser): boolean {
  const { metadata } = (pod ?? {}) as Raw;
  return (
    metadata?.annotations?.[TOOLBOX_USER_ANNOTATION] === user.username &&
    metadata.labels?.[TOOLBOX_USER_LABEL] === userHash(user.username) &&
    (metadata.ownerReferences ?? []).some((owner) => owner.kind === 'User' && owner.uid === user.uid)
  );
}

export type ToolboxState =
  | { state: 'running' }
  | { state: 'starting'; reason: string }
  /** Not this user's, made for other settings, finished or going: deleted and made again. */
  | { state: 'replace' }
  /** A pod of that name kapi did not make: left alone. */
  | { state: 'foreign' };

export function toolboxState(pod: unknown, settings: ToolboxSettings, user: ToolboxUser): ToolboxState {
  const raw = (pod ?? {}) as Raw;
  if (raw.metadata?.labels?.[TOOLBOX_APP_LABEL] !== TOOLBOX_APP) return { state: 'foreign' };
  if (!isToolboxOf(pod, user) || raw.metadata?.deletionTimestamp) return { state: 'replace' };
  if (raw.metadata?.annotations?.[TOOLBOX_SPEC_ANNOTATION] !== specDigest(settings)) return { state: 'replace' };
  const phase = raw.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { state: 'replace' };
  const container = (raw.status?.containerStatuses ?? []).find((status) => status.name === TOOLBOX_CONTAINER);
  if (phase === 'Running' && container?.state?.running) return { state: 'running' };
  const waiting = container?.state?.waiting?.reason;
  return { state: 'starting', reason: waiting ?? phase ?? 'Pending' };
}

/** The kubeconfig the shell writes (no credential: kubectl asks the shell's `KAPI_TOKEN` for the token). */
export function toolboxKubeconfig(settings: ToolboxSettings, username: string): string {
  const credential =
    'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\' "$KAPI_TOKEN"';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'kapi',
        cluster: {
          server: settings.kapiUrl,
          ...(settings.caPem && { 'certificate-authority-data': Buffer.from(settings.caPem).toString('base64') }),
          ...(settings.tlsServerName && { 'tls-server-name': settings.tlsServerName }),
        },
      },
    ],
    users: [
      {
        name: username,
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: 'sh',
            args: ['-c', credential],
            interactiveMode: 'Never',
            provideClusterInfo: false,
          },
        },
      },
    ],
    contexts: [{ name: `${username}@kapi`, context: { cluster: 'kapi', user: username } }],
    'current-context': `${username}@kapi`,
  });
}

/**
 * The exec's command. In kapi's pod (its PID 1 carries the mark) a session starts alone and clean: every process an
 * earlier session left (one could wait on the next session's tty for its token) is killed, and HOME and /tmp (a
 * planted shell profile) emptied. Then it writes the kubeconfig (its argument: nothing secret), turns the tty's echo
 * off (or fails: no token is sent to a tty that echoes), says so, reads the token kapi sends, turns echo back on and
 * becomes the user's shell (bash where the image has it).
 */
export function toolboxCommand(settings: ToolboxSettings, username: string): string[] {
  const script = [
    'umask 077',
    `if grep -q ${POD_MARK} /proc/1/cmdline 2>/dev/null; then kill -9 -1 2>/dev/null; ` +
      'rm -rf "${HOME:?}"/* "$HOME"/.[!.]* "$HOME"/..?* /tmp/* /tmp/.[!.]* /tmp/..?* 2>/dev/null; fi',
    'export KUBECONFIG="$HOME/.kube/config"',
    'mkdir -p "$HOME/.kube"',
    'printf "%s\\n" "$1" > "$KUBECONFIG"',
    'stty -echo || exit 1',
    `printf '${TOOLBOX_READY.replace('\x1b', '\\033').replace('\x07', '\\007')}'`,
    'IFS= read -r KAPI_TOKEN',
    'stty echo 2>/dev/null',
    'export KAPI_TOKEN',
    'cd "$HOME"',
    'if command -v bash >/dev/null 2>&1; then exec bash; fi',
    'exec sh',
  ].join('; ');
  return ['/bin/sh', '-c', script, 'kapi-kubectl', toolboxKubeconfig(settings, username)];
}

/**
 * The shell's output until it says it is ready: held (never shown: it precedes the token), then what follows the
 * signal. `ready` once it came; what it held is bounded, as a shell that never says it is not kapi's.
 */
export class ToolboxHandshake {
  private held = '';
  ready = false;

  /** Output to show (after the signal), and whether the signal came in this piece. */
  take(text: string): { shown: string; nowReady: boolean } {
    if (this.ready) return { shown: text, nowReady: false };
    this.held += text;
    const at = this.held.indexOf(TOOLBOX_READY);
    if (at < 0) {
      // keep only what could still begin the signal
      if (this.held.length > 64 * 1024) this.held = this.held.slice(-TOOLBOX_READY.length);
      return { shown: '', nowReady: false };
    }
    this.ready = true;
    const shown = this.held.slice(at + TOOLBOX_READY.length);
    this.held = '';
    return { shown, nowReady: true };
  }
}
