import { qosClass } from './builtin-types.js';
import { hashString, randomHex, seededRandom, seededUid, type Random } from './random.js';
import type { KubeObject } from './resource-types.js';
import { iso, nodeIp, podCidrBase } from './seed-format.js';
import { CONTROL_PLANE, COREDNS, DAEMONS, WORKLOADS, type ContainerSpec, type Workload } from './seed-workloads.js';

/**
 * Seeded pods: podsPerNode on every node, named as their controllers would name them, with containers, resources,
 * phases, conditions and container statuses that look real. Deterministic for a given random source.
 */
// Read once: generation runs per pod, and global lookups are slow in VM contexts.
const { floor, min, max } = Math;

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Five characters unique for every n below 27^5, scrambled so neighbours do not look sequential. */
function podSuffix(n: number): string {
  let value = (n * 2_654_435_761) % 14_348_907;
  let out = '';
  for (let i = 0; i < 5; i++) {
    out += SUFFIX_ALPHABET[value % 27];
    value = floor(value / 27);
  }
  return out;
}

function templateHash(app: string): string {
  let h = 0;
  for (const ch of app) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return podSuffix(h % 14_348_907) + podSuffix((h >>> 7) % 14_348_907);
}

function containerSpec(c: ContainerSpec): Record<string, unknown> {
  const resources: Record<string, unknown> = {};
  if (c.requests) resources.requests = c.requests;
  if (c.limits) resources.limits = c.limits;
  const spec: Record<string, unknown> = { name: c.name, image: c.image, resources, imagePullPolicy: 'IfNotPresent' };
  if (c.port) spec.ports = [{ containerPort: c.port, protocol: 'TCP' }];
  return spec;
}

type Phase = 'Running' | 'Pending' | 'Succeeded' | 'Failed';

/**
 * The uid of a pod's owner: its node's, or the seeded owner object's. For other owners a random uid is still drawn
 * (and dropped), so every later value of the seed is what it was before owners had objects of their own.
 */
function ownerOf(workload: Workload, ownerName: string, node: KubeObject, random: Random): string {
  if (workload.owner === 'Node') return node.metadata.uid as string;
  seededUid(random);
  return ownerUid(workload.owner, workload.namespace, ownerName);
}

const imageDigests = new Map<string, string>();

/** One digest per image, as every node pulling a tag gets the same image. */
function imageID(image: string): string {
  let id = imageDigests.get(image);
  if (!id) {
    id = `${image.split(':')[0]}@sha256:${randomHex(seededRandom(hashString(image)), 8)}`;
    imageDigests.set(image, id);
  }
  return id;
}

function containerStatus(
  c: ContainerSpec,
  phase: Phase,
  started: string,
  finished: string,
  random: Random,
  init: boolean,
) {
  const base = { name: c.name, image: c.image, imageID: imageID(c.image), restartCount: 0 };
  const id = `containerd://${randomHex(random, 8)}`;
  if (phase === 'Pending' && !init) {
    return { ...base, imageID: '', ready: false, started: false, state: { waiting: { reason: 'ContainerCreating' } } };
  }
  if (init || phase === 'Succeeded') {
    return {
      ...base,
      containerID: id,
      ready: false,
      started: false,
      state: {
        terminated: { exitCode: 0, reason: 'Completed', startedAt: started, finishedAt: finished, containerID: id },
      },
    };
  }
  if (phase === 'Failed') {
    return {
      ...base,
      containerID: id,
      ready: false,
      started: false,
      state: {
        terminated: { exitCode: 1, reason: 'Error', startedAt: started, finishedAt: finished, containerID: id },
      },
    };
  }
  const restarts = random() < 0.1 ? 1 + floor(random() * 4) : 0;
  return {
    ...base,
    restartCount: restarts,
    containerID: id,
    ready: true,
    started: true,
    state: { running: { startedAt: started } },
  };
}

function podConditions(phase: Phase, scheduled: string, ready: string) {
  const running = phase === 'Running';
  const done = phase === 'Succeeded' || phase === 'Failed';
  const c = (type: string, status: boolean, reason?: string) => ({
    type,
    status: status ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: type === 'PodScheduled' ? scheduled : ready,
    ...(reason ? { reason } : {}),
  });
  return [
    c('PodReadyToStartContainers', running),
    c('Initialized', phase !== 'Pending', phase === 'Pending' ? 'ContainersNotInitialized' : undefined),
    c('Ready', running, running ? undefined : done ? 'PodCompleted' : 'ContainersNotReady'),
    c('ContainersReady', running, running ? undefined : done ? 'PodCompleted' : 'ContainersNotReady'),
    c('PodScheduled', true),
  ];
}

function choosePhase(workload: Workload, random: Random): Phase {
  if (workload.owner === 'DaemonSet') return 'Running';
  if (workload.owner === 'Job') return random() < 0.8 ? 'Succeeded' : 'Failed';
  const r = random();
  if (r < 0.04) return 'Pending';
  if (r < 0.06) return 'Failed';
  return 'Running';
}

/** A seeded owner's uid, from its kind, namespace and name: its pods' ownerReferences and the object itself agree. */
export function ownerUid(kind: string, namespace: string, name: string): string {
  return seededUid(seededRandom(hashString(`${kind}/${namespace}/${name}`)));
}

/** The ReplicaSet name of a Deployment's seeded pods (`<app>-<pod-template-hash>`). */
export function replicaSetName(app: string): string {
  return `${app}-${templateHash(app)}`;
}

export { templateHash };

/**
 * `scaledWorkload(i)`, when given, names the workload of the i-th worker pod instead of the demo mix (the bench's
 * thousands of Deployments).
 */
export function seedPods(
  nodes: readonly KubeObject[],
  podsPerNode: number,
  now: number,
  random: Random,
  scaledWorkload?: (cursor: number) => Workload,
): KubeObject[] {
  const pods: KubeObject[] = [];
  let counter = 0;
  let workloadCursor = 0;
  nodes.forEach((node, index) => {
    const nodeName = node.metadata.name as string;
    const nodeCreated = Date.parse(node.metadata.creationTimestamp as string);
    const hostIP = nodeIp(index + 1);
    const controlPlane = (node.metadata.labels ?? {})['node-role.kubernetes.io/control-plane'] !== undefined;
    for (let slot = 0; slot < podsPerNode; slot++) {
      let workload: Workload;
      if (slot < DAEMONS.length) workload = DAEMONS[slot] as Workload;
      else if (controlPlane) workload = CONTROL_PLANE[slot - DAEMONS.length] ?? COREDNS;
      else if (scaledWorkload) workload = scaledWorkload(workloadCursor++);
      else workload = WORKLOADS[workloadCursor++ % WORKLOADS.length] as Workload;
      const phase = choosePhase(workload, random);
      const suffix = podSuffix(++counter);
      const name =
        workload.owner === 'Node'
          ? `${workload.app}-${nodeName}`
          : workload.owner === 'ReplicaSet'
            ? `${workload.app}-${templateHash(workload.app)}-${suffix}`
            : workload.owner === 'StatefulSet'
              ? `${workload.app}-${counter}`
              : workload.owner === 'Job'
                ? `${workload.app}-${29_000_000 + counter}-${suffix}`
                : `${workload.app}-${suffix}`;
      const created = nodeCreated + 120_000 + floor(random() * max(1, now - nodeCreated - 180_000));
      const started = iso(created + 2_000);
      const finished = iso(min(now - 60_000, created + 60_000 + floor(random() * 3_600_000)));
      const ownerName =
        workload.owner === 'ReplicaSet'
          ? `${workload.app}-${templateHash(workload.app)}`
          : workload.owner === 'Job'
            ? name.replace(/-[^-]+$/, '')
            : workload.owner === 'Node'
              ? nodeName
              : workload.app;
      const spec: Record<string, unknown> = {
        containers: workload.containers.map(containerSpec),
        restartPolicy: workload.owner === 'Job' ? 'Never' : 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        serviceAccountName: workload.owner === 'DaemonSet' || workload.app === 'coredns' ? workload.app : 'default',
        nodeName,
        schedulerName: 'default-scheduler',
        priority: workload.namespace === 'kube-system' ? 2_000_001_000 : 0,
      };
      if (workload.init) spec.initContainers = workload.init.map(containerSpec);
      if (workload.owner === 'DaemonSet' || workload.owner === 'Node') spec.tolerations = [{ operator: 'Exists' }];
      if (workload.owner === 'Node') spec.hostNetwork = true;
      const status: Record<string, unknown> = {
        phase,
        conditions: podConditions(phase, iso(created), started),
        hostIP,
        hostIPs: [{ ip: hostIP }],
        startTime: iso(created + 1_000),
        qosClass: qosClass(spec),
      };
      if (phase !== 'Pending') {
        const ip =
          workload.owner === 'DaemonSet' || workload.owner === 'Node'
            ? hostIP
            : `${podCidrBase(index + 1)}.${2 + (slot % 250)}`;
        status.podIP = ip;
        status.podIPs = [{ ip }];
      }
      if (workload.init)
        status.initContainerStatuses = workload.init.map((c) =>
          containerStatus(c, phase, started, iso(created + 1_500), random, true),
        );
      status.containerStatuses = workload.containers.map((c) =>
        containerStatus(c, phase, started, finished, random, false),
      );
      const labels: Record<string, string> = { app: workload.app };
      if (workload.owner === 'ReplicaSet') labels['pod-template-hash'] = templateHash(workload.app);
      if (workload.owner === 'StatefulSet') labels['statefulset.kubernetes.io/pod-name'] = name;
      if (workload.owner === 'Job') labels['batch.kubernetes.io/job-name'] = ownerName;
      pods.push({
        metadata: {
          name,
          namespace: workload.namespace,
          uid: seededUid(random),
          creationTimestamp: iso(created),
          generation: 1,
          labels,
          ownerReferences: [
            {
              apiVersion: workload.owner === 'Job' ? 'batch/v1' : workload.owner === 'Node' ? 'v1' : 'apps/v1',
              kind: workload.owner,
              name: ownerName,
              uid: ownerOf(workload, ownerName, node, random),
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec,
        status,
      });
    }
  });
  return pods;
}
