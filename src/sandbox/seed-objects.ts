import { hashString, randomHex, seededRandom } from './random.js';
import type { KubeObject } from './resource-types.js';
import { DAY, iso } from './seed-format.js';
import { ownerUid } from './seed-pods.js';

/**
 * The objects that own and serve the seeded pods, so every kind a console lists has something to show: the
 * Deployments and ReplicaSets, StatefulSet, DaemonSets, Jobs and their CronJob behind the pods (statuses counted from
 * those pods), Services, ConfigMaps, Secrets, a StorageClass with claims and volumes, an Ingress, NetworkPolicies,
 * a Role with its binding and Events. Deterministic: uids come from each object's name, times from `now`.
 */
export interface SeededObjects {
  deployments: KubeObject[];
  replicaSets: KubeObject[];
  statefulSets: KubeObject[];
  daemonSets: KubeObject[];
  jobs: KubeObject[];
  cronJobs: KubeObject[];
  services: KubeObject[];
  configMaps: KubeObject[];
  secrets: KubeObject[];
  storageClasses: KubeObject[];
  persistentVolumeClaims: KubeObject[];
  persistentVolumes: KubeObject[];
  ingresses: KubeObject[];
  networkPolicies: KubeObject[];
  roles: KubeObject[];
  roleBindings: KubeObject[];
  events: KubeObject[];
}

/** The bench's cluster: this many Services and ConfigMaps beside the pods' Deployments (seed-pods' scaled workloads). */
export interface SeedScale {
  services: number;
  configMaps: number;
}

type Obj = Record<string, unknown>;
const { floor } = Math;

interface Owned {
  kind: string;
  namespace: string;
  name: string;
  pods: KubeObject[];
}

function uidOf(kind: string, namespace: string, name: string): string {
  return ownerUid(kind, namespace, name);
}

function meta(kind: string, namespace: string, name: string, created: number, extra: Obj = {}): KubeObject['metadata'] {
  return {
    name,
    ...(namespace ? { namespace } : {}),
    uid: uidOf(kind, namespace, name),
    creationTimestamp: iso(created),
    ...extra,
  };
}

function ownerReference(apiVersion: string, kind: string, namespace: string, name: string): Obj {
  return {
    apiVersion,
    kind,
    name,
    uid: uidOf(kind, namespace, name),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The pod template a controller stamped its pods from: the first pod's containers and its stable labels. */
function templateOf(pod: KubeObject, dropLabels: readonly string[] = []): Obj {
  const spec = pod.spec as Obj;
  const labels: Record<string, string> = { ...pod.metadata.labels };
  for (const key of dropLabels) delete labels[key];
  const templateSpec: Obj = {
    containers: spec.containers,
    restartPolicy: spec.restartPolicy,
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    schedulerName: 'default-scheduler',
  };
  if (spec.initContainers) templateSpec.initContainers = spec.initContainers;
  if (spec.serviceAccountName !== 'default') templateSpec.serviceAccountName = spec.serviceAccountName;
  if (spec.tolerations) templateSpec.tolerations = spec.tolerations;
  return { metadata: { creationTimestamp: null, labels }, spec: templateSpec };
}

function running(pods: readonly KubeObject[]): number {
  return pods.filter((pod) => (pod.status as Obj).phase === 'Running').length;
}

function earliest(pods: readonly KubeObject[]): number {
  return Math.min(...pods.map((pod) => Date.parse(pod.metadata.creationTimestamp as string)));
}

/** Pods grouped by their controller (ownerReferences[0]), in first-seen order. */
function owners(pods: readonly KubeObject[]): Owned[] {
  const byKey = new Map<string, Owned>();
  for (const pod of pods) {
    const owner = (pod.metadata.ownerReferences as Obj[] | undefined)?.[0];
    if (!owner || owner.kind === 'Node') continue;
    const namespace = pod.metadata.namespace as string;
    const key = `${String(owner.kind)}/${namespace}/${String(owner.name)}`;
    let group = byKey.get(key);
    if (!group) {
      group = { kind: String(owner.kind), namespace, name: String(owner.name), pods: [] };
      byKey.set(key, group);
    }
    group.pods.push(pod);
  }
  return [...byKey.values()];
}

function appsObjects(groups: readonly Owned[], nodes: number, out: SeededObjects, withEvents: boolean): void {
  for (const group of groups) {
    const { namespace, name, pods } = group;
    const first = pods[0] as KubeObject;
    const created = earliest(pods) - 30_000;
    const ready = running(pods);
    const app = (first.metadata.labels ?? {})['app'] ?? name;
    if (group.kind === 'ReplicaSet') {
      const hash = (first.metadata.labels ?? {})['pod-template-hash'] ?? '';
      const deploymentName = hash && name.endsWith(`-${hash}`) ? name.slice(0, -(hash.length + 1)) : name;
      const template = templateOf(first);
      const deploymentTemplate = templateOf(first, ['pod-template-hash']);
      const replicas = pods.length;
      const status = {
        observedGeneration: 1,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: ready,
        availableReplicas: ready,
        ...(ready < replicas ? { unavailableReplicas: replicas - ready } : {}),
        conditions: [
          {
            type: 'Available',
            status: ready === replicas ? 'True' : 'False',
            lastUpdateTime: iso(created + 60_000),
            lastTransitionTime: iso(created + 60_000),
            reason: ready === replicas ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
            message:
              ready === replicas
                ? 'Deployment has minimum availability.'
                : 'Deployment does not have minimum availability.',
          },
          {
            type: 'Progressing',
            status: 'True',
            lastUpdateTime: iso(created + 90_000),
            lastTransitionTime: iso(created + 1_000),
            reason: 'NewReplicaSetAvailable',
            message: `ReplicaSet "${name}" has successfully progressed.`,
          },
        ],
      };
      out.deployments.push({
        metadata: meta('Deployment', namespace, deploymentName, created, {
          generation: 1,
          labels: { app },
          annotations: { 'deployment.kubernetes.io/revision': '1' },
        }),
        spec: {
          replicas,
          selector: { matchLabels: { app } },
          template: deploymentTemplate,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
          revisionHistoryLimit: 10,
          progressDeadlineSeconds: 600,
        },
        status,
      });
      out.replicaSets.push({
        metadata: meta('ReplicaSet', namespace, name, created + 1_000, {
          generation: 1,
          labels: { app, 'pod-template-hash': hash },
          annotations: {
            'deployment.kubernetes.io/desired-replicas': String(replicas),
            'deployment.kubernetes.io/max-replicas': String(replicas + Math.ceil(replicas / 4)),
            'deployment.kubernetes.io/revision': '1',
          },
          ownerReferences: [ownerReference('apps/v1', 'Deployment', namespace, deploymentName)],
        }),
        spec: { replicas, selector: { matchLabels: { app, 'pod-template-hash': hash } }, template },
        status: {
          replicas,
          fullyLabeledReplicas: replicas,
          readyReplicas: ready,
          availableReplicas: ready,
          observedGeneration: 1,
        },
      });
      if (withEvents) {
        out.events.push(
          event(namespace, `${deploymentName}.${randomHexFor(deploymentName)}`, created + 1_000, {
            involvedObject: {
              kind: 'Deployment',
              namespace,
              name: deploymentName,
              uid: uidOf('Deployment', namespace, deploymentName),
              apiVersion: 'apps/v1',
            },
            reason: 'ScalingReplicaSet',
            message: `Scaled up replica set ${name} to ${replicas}`,
            source: { component: 'deployment-controller' },
            type: 'Normal',
          }),
        );
      }
    } else if (group.kind === 'StatefulSet') {
      const replicas = pods.length;
      out.statefulSets.push({
        metadata: meta('StatefulSet', namespace, name, created, { generation: 1, labels: { app } }),
        spec: {
          replicas,
          selector: { matchLabels: { app } },
          serviceName: name,
          template: templateOf(first, ['statefulset.kubernetes.io/pod-name']),
          podManagementPolicy: 'OrderedReady',
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
          revisionHistoryLimit: 10,
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
          volumeClaimTemplates: [
            {
              apiVersion: 'v1',
              kind: 'PersistentVolumeClaim',
              metadata: { name: 'data', creationTimestamp: null },
              spec: {
                accessModes: ['ReadWriteOnce'],
                resources: { requests: { storage: '8Gi' } },
                volumeMode: 'Filesystem',
              },
            },
          ],
        },
        status: {
          observedGeneration: 1,
          replicas,
          readyReplicas: ready,
          currentReplicas: replicas,
          updatedReplicas: replicas,
          availableReplicas: ready,
          collisionCount: 0,
        },
      });
    } else if (group.kind === 'DaemonSet') {
      out.daemonSets.push({
        metadata: meta('DaemonSet', namespace, name, created, {
          generation: 1,
          labels: { 'k8s-app': app },
          annotations: { 'deprecated.daemonset.template.generation': '1' },
        }),
        spec: {
          selector: { matchLabels: { app } },
          template: templateOf(first),
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
          revisionHistoryLimit: 10,
        },
        status: {
          currentNumberScheduled: nodes,
          numberMisscheduled: 0,
          desiredNumberScheduled: nodes,
          numberReady: ready,
          observedGeneration: 1,
          updatedNumberScheduled: nodes,
          numberAvailable: ready,
          ...(ready < nodes ? { numberUnavailable: nodes - ready } : {}),
        },
      });
    } else if (group.kind === 'Job') {
      const phase = (first.status as Obj).phase;
      const done = iso(Date.parse(first.metadata.creationTimestamp as string) + 90_000);
      const succeeded = phase === 'Succeeded';
      const failed = phase === 'Failed';
      const cronJob = 'report';
      const uid = uidOf('Job', namespace, name);
      const generated = {
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': name,
        'controller-uid': uid,
        'job-name': name,
      };
      const template = templateOf(first, ['batch.kubernetes.io/job-name']);
      (template.metadata as Obj).labels = { ...((template.metadata as Obj).labels as Obj), ...generated };
      out.jobs.push({
        metadata: meta('Job', namespace, name, created, {
          generation: 1,
          labels: { ...generated, app },
          ownerReferences: [ownerReference('batch/v1', 'CronJob', namespace, cronJob)],
        }),
        spec: {
          parallelism: 1,
          completions: 1,
          backoffLimit: 0,
          completionMode: 'NonIndexed',
          suspend: false,
          manualSelector: false,
          podReplacementPolicy: 'TerminatingOrFailed',
          selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
          template,
        },
        status: {
          startTime: iso(created + 1_000),
          ...(succeeded ? { completionTime: done, succeeded: 1 } : {}),
          ...(failed ? { failed: 1 } : {}),
          ...(succeeded || failed
            ? {
                conditions: [
                  {
                    type: succeeded ? 'Complete' : 'Failed',
                    status: 'True',
                    lastProbeTime: done,
                    lastTransitionTime: done,
                    ...(failed
                      ? { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
                      : {}),
                  },
                ],
              }
            : { active: 1 }),
          ready: 0,
          terminating: 0,
          uncountedTerminatedPods: {},
        },
      });
    }
  }
}

let eventCounter = 0;
function randomHexFor(name: string): string {
  return randomHex(seededRandom(hashString(`${name}/${eventCounter++}`)), 2);
}

function event(namespace: string, name: string, at: number, fields: Obj): KubeObject {
  return {
    metadata: { name, namespace, uid: uidOf('Event', namespace, name), creationTimestamp: iso(at) },
    firstTimestamp: iso(at),
    lastTimestamp: iso(at),
    count: 1,
    eventTime: null,
    reportingComponent: String((fields.source as Obj | undefined)?.component ?? ''),
    reportingInstance: '',
    ...fields,
  };
}

const ROOT_CA =
  '-----BEGIN CERTIFICATE-----\nMIIBkTCCATegAwIBAgIUY2FuZGJveCByb290IGNhIGZvciBrYXBpMAoGCCqGSM49\n-----END CERTIFICATE-----\n';

function serviceObject(namespace: string, name: string, created: number, spec: Obj, labels: Obj = {}): KubeObject {
  const n = hashString(`${namespace}/${name}`);
  const clusterIP = spec.clusterIP ?? `10.${96 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${(n & 253) + 2}`;
  return {
    metadata: meta('Service', namespace, name, created, { labels }),
    spec: {
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ...spec,
      clusterIP,
      clusterIPs: [clusterIP],
    },
    status: { loadBalancer: {} },
  };
}

/** Everything besides nodes, pods and the identity objects: see the interface. */
export function seedObjects(options: {
  pods: readonly KubeObject[];
  nodes: number;
  namespaces: readonly string[];
  now: number;
  scale?: SeedScale;
}): SeededObjects {
  eventCounter = 0;
  const { now, pods } = options;
  const out: SeededObjects = {
    deployments: [],
    replicaSets: [],
    statefulSets: [],
    daemonSets: [],
    jobs: [],
    cronJobs: [],
    services: [],
    configMaps: [],
    secrets: [],
    storageClasses: [],
    persistentVolumeClaims: [],
    persistentVolumes: [],
    ingresses: [],
    networkPolicies: [],
    roles: [],
    roleBindings: [],
    events: [],
  };
  const clusterCreated = now - 181 * DAY;
  const groups = owners(pods);
  appsObjects(groups, options.nodes, out, !options.scale);

  // Every namespace holds the cluster CA, as kube-controller-manager publishes it.
  for (const namespace of options.namespaces) {
    out.configMaps.push({
      metadata: meta('ConfigMap', namespace, 'kube-root-ca.crt', clusterCreated + 150_000, {
        annotations: {
          'kubernetes.io/description':
            'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
        },
      }),
      data: { 'ca.crt': ROOT_CA },
    });
  }

  if (options.scale) {
    scaledObjects(options.scale, out, now);
    return out;
  }
  demoObjects(groups, out, now, clusterCreated);
  return out;
}

function demoObjects(groups: readonly Owned[], out: SeededObjects, now: number, clusterCreated: number): void {
  const jobs = groups.filter((group) => group.kind === 'Job');
  if (jobs.length > 0) {
    out.cronJobs.push({
      metadata: meta('CronJob', 'demo', 'report', clusterCreated + 3 * DAY, {
        generation: 1,
        labels: { app: 'report' },
      }),
      spec: {
        schedule: '0 */6 * * *',
        concurrencyPolicy: 'Forbid',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          metadata: { creationTimestamp: null },
          spec: {
            backoffLimit: 0,
            template: {
              metadata: { creationTimestamp: null, labels: { app: 'report' } },
              spec: {
                containers: [{ name: 'report', image: 'ghcr.io/kapi-demo/report:1.0.0', resources: {} }],
                restartPolicy: 'Never',
                terminationGracePeriodSeconds: 30,
                dnsPolicy: 'ClusterFirst',
                securityContext: {},
                schedulerName: 'default-scheduler',
              },
            },
          },
        },
      },
      status: { lastScheduleTime: iso(now - 2 * 3600_000), lastSuccessfulTime: iso(now - 2 * 3600_000 + 90_000) },
    });
    // A second, suspended one: the console's "paused" state.
    out.cronJobs.push({
      metadata: meta('CronJob', 'demo', 'cleanup', clusterCreated + 4 * DAY, {
        generation: 1,
        labels: { app: 'cleanup' },
      }),
      spec: {
        schedule: '30 3 * * 0',
        concurrencyPolicy: 'Allow',
        suspend: true,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          metadata: { creationTimestamp: null },
          spec: {
            template: {
              metadata: { creationTimestamp: null },
              spec: {
                containers: [{ name: 'cleanup', image: 'busybox:1.37', resources: {} }],
                restartPolicy: 'OnFailure',
                terminationGracePeriodSeconds: 30,
                dnsPolicy: 'ClusterFirst',
                securityContext: {},
                schedulerName: 'default-scheduler',
              },
            },
          },
        },
      },
      status: {},
    });
  }

  const at = clusterCreated + 5 * DAY;
  out.services.push(
    serviceObject(
      'kube-system',
      'kube-dns',
      clusterCreated + 200_000,
      {
        clusterIP: '10.96.0.10',
        selector: { 'k8s-app': 'kube-dns' },
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        ],
      },
      { 'k8s-app': 'kube-dns', 'kubernetes.io/name': 'CoreDNS' },
    ),
    serviceObject(
      'demo',
      'web',
      at,
      { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }] },
      { app: 'web' },
    ),
    serviceObject(
      'demo',
      'api',
      at + 60_000,
      { selector: { app: 'api' }, ports: [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 8080 }] },
      { app: 'api' },
    ),
    serviceObject(
      'default',
      'redis',
      at + 120_000,
      {
        clusterIP: 'None',
        selector: { app: 'redis' },
        ports: [{ name: 'redis', port: 6379, protocol: 'TCP', targetPort: 6379 }],
      },
      { app: 'redis' },
    ),
    serviceObject(
      'kapi-system',
      'kapi-console',
      at + 180_000,
      { selector: { app: 'kapi-console' }, ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8000 }] },
      { app: 'kapi-console' },
    ),
  );

  out.configMaps.push(
    {
      metadata: meta('ConfigMap', 'kube-system', 'coredns', clusterCreated + 200_000),
      data: {
        Corefile:
          '.:53 {\n    errors\n    health\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n    forward . /etc/resolv.conf\n    cache 30\n}\n',
      },
    },
    {
      metadata: meta('ConfigMap', 'kube-system', 'kube-proxy', clusterCreated + 200_000, {
        labels: { app: 'kube-proxy' },
      }),
      data: {
        'config.conf': 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n',
      },
    },
    {
      metadata: meta('ConfigMap', 'demo', 'web-config', at, { labels: { app: 'web' } }),
      data: { 'nginx.conf': 'server { listen 80; location / { proxy_pass http://api:8080; } }\n' },
    },
    {
      metadata: meta('ConfigMap', 'demo', 'api-config', at, { labels: { app: 'api' } }),
      data: { LOG_LEVEL: 'info', FEATURE_REPORTS: 'true' },
    },
  );

  out.secrets.push(
    {
      metadata: meta('Secret', 'demo', 'api-credentials', at, { labels: { app: 'api' } }),
      type: 'Opaque',
      data: {
        username: Buffer.from('api').toString('base64'),
        password: Buffer.from(randomHex(seededRandom(7), 4)).toString('base64'),
      },
    },
    {
      metadata: meta('Secret', 'demo', 'web-tls', at, { labels: { app: 'web' } }),
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(ROOT_CA).toString('base64'),
        'tls.key': Buffer.from('demo key, not a real one').toString('base64'),
      },
    },
  );

  out.storageClasses.push({
    metadata: meta('StorageClass', '', 'standard', clusterCreated + 300_000, {
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
    }),
    provisioner: 'rancher.io/local-path',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  // One bound claim (and its volume) per redis replica, as the StatefulSet's claim template makes them.
  for (const group of groups.filter((g) => g.kind === 'StatefulSet')) {
    group.pods.forEach((pod, i) => {
      const claim = `data-${pod.metadata.name as string}`;
      const created = Date.parse(pod.metadata.creationTimestamp as string) - 5_000;
      const claimUid = uidOf('PersistentVolumeClaim', group.namespace, claim);
      const volume = `pvc-${claimUid}`;
      out.persistentVolumeClaims.push({
        metadata: meta('PersistentVolumeClaim', group.namespace, claim, created, {
          labels: { app: 'redis' },
          annotations: {
            'pv.kubernetes.io/bind-completed': 'yes',
            'pv.kubernetes.io/bound-by-controller': 'yes',
            'volume.beta.kubernetes.io/storage-provisioner': 'rancher.io/local-path',
            'volume.kubernetes.io/storage-provisioner': 'rancher.io/local-path',
          },
        }),
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '8Gi' } },
          storageClassName: 'standard',
          volumeMode: 'Filesystem',
          volumeName: volume,
        },
        status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '8Gi' } },
      });
      out.persistentVolumes.push({
        metadata: meta('PersistentVolume', '', volume, created + 2_000, {
          annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
        }),
        spec: {
          accessModes: ['ReadWriteOnce'],
          capacity: { storage: '8Gi' },
          claimRef: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace: group.namespace,
            name: claim,
            uid: claimUid,
          },
          hostPath: {
            path: `/opt/local-path-provisioner/${volume}_${group.namespace}_${claim}`,
            type: 'DirectoryOrCreate',
          },
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: 'standard',
          volumeMode: 'Filesystem',
        },
        status: { phase: i % 5 === 4 ? 'Released' : 'Bound', lastPhaseTransitionTime: iso(created + 3_000) },
      });
    });
  }
  out.persistentVolumeClaims.push({
    metadata: meta('PersistentVolumeClaim', 'demo', 'scratch', at + 240_000),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: 'standard',
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Pending' },
  });
  out.persistentVolumes.push({
    metadata: meta('PersistentVolume', '', 'archive', clusterCreated + 400_000, { labels: { tier: 'archive' } }),
    spec: {
      accessModes: ['ReadOnlyMany'],
      capacity: { storage: '100Gi' },
      nfs: { server: '172.16.0.5', path: '/exports/archive' },
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Available', lastPhaseTransitionTime: iso(clusterCreated + 400_000) },
  });

  out.ingresses.push({
    metadata: meta('Ingress', 'demo', 'web', at + 300_000, { generation: 1, labels: { app: 'web' } }),
    spec: {
      ingressClassName: 'nginx',
      rules: [
        {
          host: 'demo.kapi.local',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
              { path: '/api', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 8080 } } } },
            ],
          },
        },
      ],
      tls: [{ hosts: ['demo.kapi.local'], secretName: 'web-tls' }],
    },
    status: { loadBalancer: { ingress: [{ ip: '172.16.0.100' }] } },
  });
  out.networkPolicies.push(
    {
      metadata: meta('NetworkPolicy', 'demo', 'default-deny', at + 360_000, { generation: 1 }),
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    },
    {
      metadata: meta('NetworkPolicy', 'demo', 'allow-web', at + 420_000, { generation: 1 }),
      spec: {
        podSelector: { matchLabels: { app: 'api' } },
        ingress: [
          { from: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ protocol: 'TCP', port: 8080 }] },
        ],
        policyTypes: ['Ingress'],
      },
    },
  );

  out.roles.push({
    metadata: meta('Role', 'demo', 'pod-reader', at),
    rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] }],
  });
  out.roleBindings.push({
    metadata: meta('RoleBinding', 'demo', 'pod-reader', at),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'demo-viewers' }],
  });

  // A Warning for each pod that did not make it, as the kubelet reports them.
  for (const group of groups) {
    for (const pod of group.pods) {
      const phase = (pod.status as Obj).phase;
      if (phase !== 'Pending' && phase !== 'Failed') continue;
      const name = pod.metadata.name as string;
      const namespace = pod.metadata.namespace as string;
      out.events.push(
        event(
          namespace,
          `${name}.${randomHexFor(name)}`,
          Date.parse(pod.metadata.creationTimestamp as string) + 5_000,
          {
            involvedObject: { kind: 'Pod', namespace, name, uid: pod.metadata.uid, apiVersion: 'v1' },
            reason: phase === 'Pending' ? 'FailedMount' : 'BackOff',
            message:
              phase === 'Pending'
                ? 'MountVolume.SetUp failed: configmap not found'
                : 'Back-off restarting failed container',
            source: { component: 'kubelet', host: (pod.spec as Obj).nodeName },
            type: 'Warning',
          },
        ),
      );
    }
  }
}

/** The bench's Services (one per Deployment, while there are Deployments) and ConfigMaps, across its namespaces. */
function scaledObjects(scale: SeedScale, out: SeededObjects, now: number): void {
  const deployments = out.deployments;
  const created = now - 30 * DAY;
  for (let i = 0; i < scale.services; i++) {
    const target = deployments[i % Math.max(1, deployments.length)];
    const namespace = (target?.metadata.namespace as string | undefined) ?? 'default';
    const app = target ? ((target.metadata.labels ?? {})['app'] ?? `svc-${i}`) : `svc-${i}`;
    const name = i < deployments.length ? app : `${app}-${floor(i / Math.max(1, deployments.length))}`;
    out.services.push(
      serviceObject(
        namespace,
        name,
        created + i * 1_000,
        { selector: { app }, ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] },
        { app },
      ),
    );
  }
  for (let i = 0; i < scale.configMaps; i++) {
    const target = deployments[i % Math.max(1, deployments.length)];
    const namespace = (target?.metadata.namespace as string | undefined) ?? 'default';
    const app = target ? ((target.metadata.labels ?? {})['app'] ?? `config-${i}`) : `config-${i}`;
    out.configMaps.push({
      metadata: meta(
        'ConfigMap',
        namespace,
        `${app}-config-${floor(i / Math.max(1, deployments.length))}`,
        created + i * 500,
        {
          labels: { app },
        },
      ),
      data: { LOG_LEVEL: i % 3 === 0 ? 'debug' : 'info', 'app.properties': `name=${app}\nreplicas=${1 + (i % 5)}\n` },
    });
  }
}
