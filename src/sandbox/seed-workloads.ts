/** What runs in the demo cluster: the daemons, the control-plane static pods, and the workloads on workers. */
export interface ContainerSpec {
  name: string;
  image: string;
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  port?: number;
}

export interface Workload {
  namespace: string;
  app: string;
  owner: 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'Job' | 'Node';
  containers: ContainerSpec[];
  init?: ContainerSpec[];
}

const res = (cpu: string, memory: string): Record<string, string> => ({ cpu, memory });

export const DAEMONS: Workload[] = [
  {
    namespace: 'kube-system',
    app: 'kube-proxy',
    owner: 'DaemonSet',
    containers: [{ name: 'kube-proxy', image: 'registry.k8s.io/kube-proxy:v1.35.0' }],
  },
  {
    namespace: 'kube-system',
    app: 'calico-node',
    owner: 'DaemonSet',
    init: [{ name: 'install-cni', image: 'docker.io/calico/cni:v3.29.1' }],
    containers: [{ name: 'calico-node', image: 'docker.io/calico/node:v3.29.1', requests: { cpu: '250m' } }],
  },
];

/** kubeadm's static pods on control-plane nodes, then CoreDNS replicas for any slots left. */
export const CONTROL_PLANE: Workload[] = [
  {
    namespace: 'kube-system',
    app: 'etcd',
    owner: 'Node',
    containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.17-0', requests: res('100m', '100Mi') }],
  },
  {
    namespace: 'kube-system',
    app: 'kube-apiserver',
    owner: 'Node',
    containers: [
      { name: 'kube-apiserver', image: 'registry.k8s.io/kube-apiserver:v1.35.0', requests: { cpu: '250m' } },
    ],
  },
  {
    namespace: 'kube-system',
    app: 'kube-controller-manager',
    owner: 'Node',
    containers: [
      {
        name: 'kube-controller-manager',
        image: 'registry.k8s.io/kube-controller-manager:v1.35.0',
        requests: { cpu: '200m' },
      },
    ],
  },
  {
    namespace: 'kube-system',
    app: 'kube-scheduler',
    owner: 'Node',
    containers: [
      { name: 'kube-scheduler', image: 'registry.k8s.io/kube-scheduler:v1.35.0', requests: { cpu: '100m' } },
    ],
  },
];

export const COREDNS: Workload = {
  namespace: 'kube-system',
  app: 'coredns',
  owner: 'ReplicaSet',
  containers: [
    {
      name: 'coredns',
      image: 'registry.k8s.io/coredns/coredns:v1.11.3',
      requests: res('100m', '70Mi'),
      limits: { memory: '170Mi' },
      port: 53,
    },
  ],
};

export const WORKLOADS: Workload[] = [
  {
    namespace: 'demo',
    app: 'web',
    owner: 'ReplicaSet',
    containers: [
      { name: 'nginx', image: 'nginx:1.27.3', requests: res('100m', '128Mi'), limits: res('500m', '256Mi'), port: 80 },
    ],
  },
  {
    namespace: 'demo',
    app: 'api',
    owner: 'ReplicaSet',
    containers: [
      {
        name: 'api',
        image: 'ghcr.io/kapi-demo/api:2.4.1',
        requests: res('250m', '256Mi'),
        limits: res('1', '512Mi'),
        port: 8080,
      },
      {
        name: 'log-shipper',
        image: 'fluent/fluent-bit:3.2',
        requests: res('50m', '64Mi'),
        limits: res('100m', '128Mi'),
      },
    ],
  },
  {
    namespace: 'demo',
    app: 'worker',
    owner: 'ReplicaSet',
    containers: [
      {
        name: 'worker',
        image: 'ghcr.io/kapi-demo/worker:2.4.1',
        requests: res('500m', '512Mi'),
        limits: res('2', '1Gi'),
      },
      { name: 'metrics', image: 'prom/statsd-exporter:v0.27.2', requests: res('20m', '32Mi') },
      {
        name: 'proxy',
        image: 'envoyproxy/envoy:v1.32.2',
        requests: res('100m', '128Mi'),
        limits: res('200m', '256Mi'),
        port: 15001,
      },
    ],
  },
  {
    namespace: 'default',
    app: 'redis',
    owner: 'StatefulSet',
    containers: [
      { name: 'redis', image: 'redis:7.4', requests: res('500m', '1Gi'), limits: res('500m', '1Gi'), port: 6379 },
    ],
  },
  {
    namespace: 'default',
    app: 'busybox',
    owner: 'ReplicaSet',
    containers: [{ name: 'busybox', image: 'busybox:1.37' }],
  },
  {
    namespace: 'demo',
    app: 'report',
    owner: 'Job',
    containers: [{ name: 'report', image: 'ghcr.io/kapi-demo/report:1.0.0', requests: res('200m', '256Mi') }],
  },
  {
    namespace: 'kapi-system',
    app: 'kapi-console',
    owner: 'ReplicaSet',
    containers: [
      {
        name: 'console',
        image: 'ghcr.io/kapi/console:0.1.0',
        requests: res('100m', '128Mi'),
        limits: res('500m', '512Mi'),
        port: 8000,
      },
    ],
  },
];
