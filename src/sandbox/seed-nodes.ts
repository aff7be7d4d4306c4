import { pick, randomHex, seededUid, type Random } from './random.js';
import type { KubeObject } from './resource-types.js';
import { DAY, iso, nodeIp, podCidrBase } from './seed-format.js';

/**
 * Seeded nodes as kubeadm + Calico register them: roles, topology labels, annotations holding JSON text, capacity,
 * conditions and node info; one unschedulable, one under memory pressure and one NotReady among the workers.
 */
// Read once: generation runs per node, and global lookups are slow in VM contexts.
const { floor, min, max, ceil } = Math;
const stringify = JSON.stringify;

export function specialNodes(count: number): {
  controlPlanes: number;
  unschedulable?: number;
  memoryPressure?: number;
  notReady?: number;
} {
  const controlPlanes = min(3, ceil(count / 100));
  const workers = count - controlPlanes;
  return {
    controlPlanes,
    unschedulable: workers >= 3 ? count - 2 : undefined,
    memoryPressure: workers >= 2 ? count - 1 : undefined,
    notReady: workers >= 1 ? count : undefined,
  };
}

function condition(type: string, status: string, reason: string, message: string, heartbeat: string, since: string) {
  return { type, status, lastHeartbeatTime: heartbeat, lastTransitionTime: since, reason, message };
}

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const SHAPES = [
  { type: 'm5.xlarge', cpu: 4, memoryKi: 16_265_628 },
  { type: 'm5.2xlarge', cpu: 8, memoryKi: 32_574_432 },
  { type: 'm5.4xlarge', cpu: 16, memoryKi: 65_192_712 },
];

export function seedNodes(count: number, now: number, random: Random): KubeObject[] {
  const special = specialNodes(count);
  const spacing = max(1000, floor((180 * DAY) / max(count, 1)));
  const heartbeat = iso(now - 7_000);
  const nodes: KubeObject[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `node-${i}`;
    const controlPlane = i <= special.controlPlanes;
    const arch = i % 7 === 0 ? 'arm64' : 'amd64';
    const shape = controlPlane ? (SHAPES[0] as (typeof SHAPES)[number]) : pick(random, SHAPES);
    const created = now - 180 * DAY + (i - 1) * spacing + floor(random() * min(spacing / 2, 900_000));
    const since = iso(created + 60_000);
    const ip = nodeIp(i);
    const zone = ZONES[(i - 1) % ZONES.length] as string;
    const cidr = `${podCidrBase(i)}.0/24`;
    const labels: Record<string, string> = {
      'beta.kubernetes.io/arch': arch,
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': arch,
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/instance-type': shape.type,
      'topology.kubernetes.io/region': 'region-1',
      'topology.kubernetes.io/zone': zone,
    };
    if (controlPlane) {
      labels['node-role.kubernetes.io/control-plane'] = '';
      labels['node.kubernetes.io/exclude-from-external-load-balancers'] = '';
    } else {
      labels['node-role.kubernetes.io/worker'] = '';
    }
    const spec: Record<string, unknown> = { podCIDR: cidr, podCIDRs: [cidr] };
    const taints: Record<string, unknown>[] = [];
    if (controlPlane) taints.push({ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' });
    if (i === special.unschedulable) {
      spec.unschedulable = true;
      taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: iso(now - 3_600_000) });
    }
    const notReady = i === special.notReady;
    const memoryPressure = i === special.memoryPressure;
    if (notReady) taints.push({ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' });
    if (memoryPressure) taints.push({ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' });
    if (taints.length) spec.taints = taints;

    const memoryAllocatableKi = shape.memoryKi - 102_400;
    nodes.push({
      metadata: {
        name,
        uid: seededUid(random),
        creationTimestamp: iso(created),
        labels,
        annotations: {
          'csi.volume.kubernetes.io/nodeid': stringify({ 'csi.tigera.io': name }),
          'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
          'node.alpha.kubernetes.io/ttl': '0',
          'projectcalico.org/IPv4Address': `${ip}/16`,
          'projectcalico.org/IPv4VXLANTunnelAddr': `${podCidrBase(i)}.0`,
          'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        },
      },
      spec,
      status: {
        capacity: {
          cpu: String(shape.cpu),
          'ephemeral-storage': '102626232Ki',
          'hugepages-1Gi': '0',
          'hugepages-2Mi': '0',
          memory: `${shape.memoryKi}Ki`,
          pods: '110',
        },
        allocatable: {
          cpu: `${shape.cpu * 1000 - 100}m`,
          'ephemeral-storage': '94580335255',
          'hugepages-1Gi': '0',
          'hugepages-2Mi': '0',
          memory: `${memoryAllocatableKi}Ki`,
          pods: '110',
        },
        conditions: [
          memoryPressure
            ? condition(
                'MemoryPressure',
                'True',
                'KubeletHasInsufficientMemory',
                'kubelet has insufficient memory available',
                heartbeat,
                iso(now - 1_800_000),
              )
            : condition(
                'MemoryPressure',
                'False',
                'KubeletHasSufficientMemory',
                'kubelet has sufficient memory available',
                heartbeat,
                since,
              ),
          condition(
            'DiskPressure',
            'False',
            'KubeletHasNoDiskPressure',
            'kubelet has no disk pressure',
            heartbeat,
            since,
          ),
          condition(
            'PIDPressure',
            'False',
            'KubeletHasSufficientPID',
            'kubelet has sufficient PID available',
            heartbeat,
            since,
          ),
          notReady
            ? condition(
                'Ready',
                'False',
                'KubeletNotReady',
                'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
                heartbeat,
                iso(now - 900_000),
              )
            : condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', heartbeat, since),
        ],
        addresses: [
          { type: 'InternalIP', address: ip },
          { type: 'Hostname', address: name },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: randomHex(random, 4),
          systemUUID: seededUid(random).toUpperCase(),
          bootID: seededUid(random),
          kernelVersion: '6.8.0-49-generic',
          osImage: 'Ubuntu 24.04.1 LTS',
          containerRuntimeVersion: 'containerd://1.7.24',
          kubeletVersion: 'v1.35.0',
          kubeProxyVersion: '',
          operatingSystem: 'linux',
          architecture: arch,
        },
      },
    });
  }
  return nodes;
}
