import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import {
  TOOLBOX_READY,
  ToolboxHandshake,
  isToolboxOf,
  toolboxCommand,
  toolboxPod,
  toolboxPodName,
  toolboxState,
  type ToolboxSettings,
} from '../../../src/apis/terminal/kubectl-toolbox.js';

const settings: ToolboxSettings = {
  namespace: 'kapi-system',
  image: 'kubectl:1',
  kapiUrl: 'https://kapi.kapi-system.svc:443',
};
const alice = { username: 'alice', uid: 'uid-a' };

/** The pod kapi made for alice, in a kubelet's state. */
function made(status: Record<string, unknown>, overrides: { settings?: ToolboxSettings; user?: typeof alice } = {}) {
  return { ...toolboxPod(overrides.settings ?? settings, overrides.user ?? alice), status };
}
const running = { phase: 'Running', containerStatuses: [{ name: 'kubectl', state: { running: {} } }] };

describe('a user’s kubectl pod', () => {
  test('when named, then a DNS-label user keeps the name; any other gets a hash no plain name can make', () => {
    expect(toolboxPodName('alice')).toBe('kubectl-alice');
    const odd = toolboxPodName('Alice@example.com');
    expect(odd).toMatch(/^kubectl\.[0-9a-f]{32}$/);
    // a user named as the hash gets a name of its own
    expect(toolboxPodName(odd.slice('kubectl.'.length))).toBe(`kubectl-${odd.slice('kubectl.'.length)}`);
    expect(toolboxPodName('Alice@example.com')).toBe(odd);
    expect(toolboxPodName('bob@example.com')).not.toBe(odd);
    expect(toolboxPodName('a'.repeat(60))).toMatch(/^kubectl\.[0-9a-f]{32}$/);
  });

  test('when made, then it holds no credential, no privilege, and is owned by the User', () => {
    const pod = toolboxPod(settings, alice) as {
      metadata: { ownerReferences: unknown[]; namespace: string };
      spec: Record<string, unknown> & { containers: Record<string, unknown>[]; volumes: Record<string, unknown>[] };
    };
    expect(pod.metadata.namespace).toBe('kapi-system');
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'iam.kapi.io/v1beta1', kind: 'User', name: 'alice', uid: 'uid-a', blockOwnerDeletion: false },
    ]);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect((pod.spec.containers[0]?.command as string[]).at(-1)).toBe('kapi-kubectl-pod');
    expect(pod.spec.serviceAccountName).toBeUndefined();
    expect(pod.spec.volumes.every((volume) => 'emptyDir' in volume)).toBe(true);
    expect(pod.spec.containers[0]).toMatchObject({
      image: 'kubectl:1',
      env: [{ name: 'HOME', value: '/home/kubectl' }],
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      },
    });
    expect(JSON.stringify(pod)).not.toMatch(/secret|KAPI_TOKEN|bearer|serviceAccountName/i);
  });

  test.each([
    ['running', made(running), { state: 'running' }],
    [
      'pulling its image',
      made({
        phase: 'Pending',
        containerStatuses: [{ name: 'kubectl', state: { waiting: { reason: 'ContainerCreating' } } }],
      }),
      { state: 'starting', reason: 'ContainerCreating' },
    ],
    ['not yet scheduled', made({}), { state: 'starting', reason: 'Pending' }],
    ['finished', made({ phase: 'Failed' }), { state: 'replace' }],
    ['made for another image', made(running, { settings: { ...settings, image: 'kubectl:2' } }), { state: 'replace' }],
    [
      'of a namesake deleted and made again (another uid)',
      made(running, { user: { username: 'alice', uid: 'uid-old' } }),
      { state: 'replace' },
    ],
    [
      'going',
      {
        ...made(running),
        metadata: { ...((made(running) as { metadata?: object }).metadata ?? {}), deletionTimestamp: 'now' },
      },
      { state: 'replace' },
    ],
  ])('when the pod is %s, then it is %j', (_what, pod, expected) => {
    expect(toolboxState(pod, settings, alice)).toEqual(expected);
  });

  test('when a pod of that name was not made by kapi, then it is left alone', () => {
    expect(toolboxState({ metadata: { name: 'kubectl-alice' }, status: running }, settings, alice)).toEqual({
      state: 'foreign',
    });
  });

  test('when kapi’s address is the session’s (a replica’s own), then the pod stays the same', () => {
    expect(
      toolboxState(made(running), { ...settings, kapiUrl: 'https://10.0.0.7:9443', tlsServerName: 'kapi' }, alice),
    ).toEqual({
      state: 'running',
    });
  });

  test('when another user or a hand-made pod of the same name is checked, then it is not alice’s', () => {
    expect(isToolboxOf(toolboxPod(settings, { username: 'bob', uid: 'uid-b' }), alice)).toBe(false);
    expect(
      isToolboxOf({ metadata: { name: 'kubectl-alice', annotations: { 'kapi.io/kubectl-user': 'alice' } } }, alice),
    ).toBe(false);
    expect(isToolboxOf(undefined, alice)).toBe(false);
  });
});

describe('the toolbox’s shell', () => {
  test('when opened, then its command writes a kubeconfig with no credential: kubectl asks the shell’s KAPI_TOKEN', () => {
    const command = toolboxCommand(
      { ...settings, caPem: 'CA', tlsServerName: 'kapi-apiserver.kapi-system.svc' },
      'alice',
    );
    expect(command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    const script = command[2] as string;
    // in kapi's pod only (its PID 1's mark), what an earlier session left is ended and its files gone
    expect(script).toMatch(
      /^umask 077; if grep -q kapi-kubectl-pod \/proc\/1\/cmdline .*; then kill -9 -1 .*rm -rf "\$\{HOME:\?\}"\/\* /,
    );
    // echo off or nothing, then the signal, then the read: the token is never echoed
    expect(script).toContain('stty -echo || exit 1');
    expect(script.indexOf('stty -echo')).toBeLessThan(script.indexOf('kapi-toolbox-ready'));
    expect(script.indexOf('kapi-toolbox-ready')).toBeLessThan(script.indexOf('read -r KAPI_TOKEN'));
    const kubeconfig = parse(command[4] as string) as {
      clusters: { cluster: Record<string, string> }[];
      users: { name: string; user: { exec: { command: string; args: string[] } } }[];
    };
    expect(kubeconfig.clusters[0]?.cluster).toEqual({
      server: settings.kapiUrl,
      'certificate-authority-data': Buffer.from('CA').toString('base64'),
      'tls-server-name': 'kapi-apiserver.kapi-system.svc',
    });
    expect(kubeconfig.users[0]?.name).toBe('alice');
    expect(kubeconfig.users[0]?.user.exec.args[1]).toContain('"$KAPI_TOKEN"');
    expect(command[4]).not.toMatch(/token:/);
  });

  test('when the shell’s output arrives, then nothing before the signal is shown, even a signal split across pieces', () => {
    const handshake = new ToolboxHandshake();
    const half = Math.floor(TOOLBOX_READY.length / 2);
    expect(handshake.take(`motd ${TOOLBOX_READY.slice(0, half)}`)).toEqual({ shown: '', nowReady: false });
    expect(handshake.take(`${TOOLBOX_READY.slice(half)}$ `)).toEqual({ shown: '$ ', nowReady: true });
    expect(handshake.take('more')).toEqual({ shown: 'more', nowReady: false });
  });

  test('when a shell never signals, then nothing is shown and what is held stays bounded', () => {
    const handshake = new ToolboxHandshake();
    for (let i = 0; i < 100; i++) expect(handshake.take('x'.repeat(10_000))).toEqual({ shown: '', nowReady: false });
    expect(handshake.ready).toBe(false);
    expect(handshake.take(TOOLBOX_READY)).toEqual({ shown: '', nowReady: true });
  });
});
