import { readFileSync } from 'node:fs';
import type { V1Container, V1Deployment, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { findObject, objectsOfKind, renderChart, type KubeObject } from './helm.js';

function container(deployment: V1Deployment): V1Container {
  const containers = deployment.spec!.template.spec!.containers;
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

function env(deployment: V1Deployment): Record<string, string | undefined> {
  return Object.fromEntries((container(deployment).env ?? []).map((variable) => [variable.name, variable.value]));
}

/** The container port a Service port's targetPort (a port name) leads to. */
function containerPortFor(deployment: V1Deployment, service: V1Service, servicePortName: string): number | undefined {
  const servicePort = service.spec!.ports!.find((port) => port.name === servicePortName);
  return container(deployment).ports!.find((port) => port.name === servicePort?.targetPort)?.containerPort;
}

describe('chart workload: Deployment, Service, PodDisruptionBudget', () => {
  let objects: KubeObject[];
  let deployment: V1Deployment;
  let service: V1Service;

  beforeAll(async () => {
    objects = await renderChart();
    deployment = findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver');
    service = findObject<V1Service>(objects, 'Service', 'kapi-apiserver');
  });

  test('when rendered with default values, then the pod runs as uid 65532, non-root, with RuntimeDefault seccomp', () => {
    const pod = deployment.spec!.template.spec!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.serviceAccountName).toBe('kapi-apiserver');
    expect(pod.terminationGracePeriodSeconds).toBe(30);
  });

  test('when rendered with default values, then the container cannot escalate, write its root filesystem or keep any capability', () => {
    expect(container(deployment).securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container(deployment).securityContext!.capabilities!.add).toBeUndefined();
  });

  test('when rendered with default values, then /tmp is a writable emptyDir and the generated CA is written there', () => {
    const mount = container(deployment).volumeMounts!.find((volumeMount) => volumeMount.mountPath === '/tmp');
    const volume = deployment.spec!.template.spec!.volumes!.find((candidate) => candidate.name === mount?.name);
    expect(volume?.emptyDir).toBeDefined();
    expect(mount?.readOnly).not.toBe(true);
    expect(env(deployment).TLS_CA_OUT).toBe('/tmp/kapi-ca.crt');
  });

  test('when rendered with default values, then the server runs in-cluster on the fixed configuration and key names', () => {
    expect(env(deployment)).toMatchObject({
      KAPI_CLUSTER: 'in-cluster',
      KAPI_CLUSTER_CONFIGURATION: 'kapi-system/kapi',
      KAPI_SIGNING_KEY_SECRET: 'kapi-system/kapi-apiserver-jwt',
      PORT: '9090',
      TLS_PORT: '9443',
      METRICS_PORT: '9091',
    });
    expect(env(deployment).TLS_SECRET).toBeUndefined();
  });

  test('when rendered with default values, then the connection bounds are the server’s defaults, spelt out', () => {
    expect(env(deployment)).toMatchObject({
      READ_HEADER_TIMEOUT: '20s',
      READ_TIMEOUT: '60s',
      IDLE_TIMEOUT: '65s',
      MAX_CONNECTIONS_PER_CLIENT: '2048',
      MAX_REQUEST_BODY_BYTES: '3145728',
    });
  });

  test('when rendered with default values, then http, https, metrics and webhook are container ports 9090, 9443, 9091 and 9444', () => {
    const ports = Object.fromEntries(container(deployment).ports!.map((port) => [port.name, port.containerPort]));
    expect(ports).toEqual({ http: 9090, https: 9443, metrics: 9091, webhook: 9444 });
  });

  test('when rendered with default values, then liveness, readiness and startup probe the health endpoints on http', () => {
    const { livenessProbe, readinessProbe, startupProbe } = container(deployment);
    expect(livenessProbe?.httpGet).toMatchObject({ path: '/livez', port: 'http' });
    expect(readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
    expect(startupProbe?.httpGet).toMatchObject({ path: '/livez', port: 'http' });
    expect(startupProbe!.failureThreshold! * startupProbe!.periodSeconds!).toBeGreaterThanOrEqual(30);
  });

  test('when rendered with default values, then requests are 100m/128Mi and limits 1 CPU/384Mi', () => {
    expect(container(deployment).resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '1', memory: '384Mi' },
    });
  });

  test('when rendered with default values, then two replicas run and a PodDisruptionBudget selects their pods', () => {
    expect(deployment.spec!.replicas).toBe(2);
    const budget = findObject<V1PodDisruptionBudget>(objects, 'PodDisruptionBudget', 'kapi-apiserver');
    expect(budget.spec!.maxUnavailable).toBe(1);
    expect(deployment.spec!.template.metadata!.labels).toMatchObject(budget.spec!.selector!.matchLabels!);
  });

  test('when rendered with default values, then the Service is a ClusterIP sending 80 to 9090 and 443 to 9443', () => {
    expect(service.spec!.type).toBe('ClusterIP');
    expect(service.spec!.ports!.map((port) => [port.name, port.port])).toEqual([
      ['http', 80],
      ['https', 443],
    ]);
    expect(containerPortFor(deployment, service, 'http')).toBe(9090);
    expect(containerPortFor(deployment, service, 'https')).toBe(9443);
    expect(service.spec!.ports!.some((port) => port.nodePort !== undefined)).toBe(false);
    expect(deployment.spec!.template.metadata!.labels).toMatchObject(service.spec!.selector!);
  });

  test('when rendered with default values, then the metrics port is not on the Service', () => {
    expect(service.spec!.ports!.map((port) => port.name)).not.toContain('metrics');
  });

  test('when rendered with default values, then every object carries the standard app.kubernetes.io labels', () => {
    for (const object of objects) {
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'kapi-apiserver',
        'app.kubernetes.io/instance': 'kapi-apiserver',
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/part-of': 'kapi',
        'app.kubernetes.io/version': expect.any(String),
      });
    }
  });

  test('when the image tag is unset, then the image is the chart appVersion; when a digest is set, then it wins', async () => {
    expect(container(deployment).image).toBe('ghcr.io/kapi-io/kapi-apiserver:0.1.0');
    const digest = `sha256:${'a'.repeat(64)}`;
    const pinned = await renderChart(['--set', 'image.tag=9.9.9', '--set', `image.digest=${digest}`]);
    expect(container(findObject<V1Deployment>(pinned, 'Deployment', 'kapi-apiserver')).image).toBe(
      `ghcr.io/kapi-io/kapi-apiserver@${digest}`,
    );
  });
});

describe('chart workload: values', () => {
  test('when service.type=NodePort with service.nodePort, then the http port is that node port', async () => {
    const objects = await renderChart(['--set', 'service.type=NodePort', '--set', 'service.nodePort=30880']);
    const service = findObject<V1Service>(objects, 'Service', 'kapi-apiserver');
    expect(service.spec!.type).toBe('NodePort');
    expect(service.spec!.ports!.find((port) => port.name === 'http')).toMatchObject({ port: 80, nodePort: 30880 });
    expect(service.spec!.ports!.find((port) => port.name === 'https')!.nodePort).toBeUndefined();
  });

  test('when service.type=NodePort without a node port, then Kubernetes is left to pick one', async () => {
    const service = findObject<V1Service>(await renderChart(['--set', 'service.type=NodePort']), 'Service', 'kapi-apiserver');
    expect(service.spec!.type).toBe('NodePort');
    expect(service.spec!.ports!.every((port) => port.nodePort === undefined)).toBe(true);
  });

  test('when a NodePort Service asks for externalTrafficPolicy Local, then client addresses are kept; ClusterIP never carries it', async () => {
    const local = findObject<V1Service>(
      await renderChart(['--set', 'service.type=NodePort', '--set', 'service.externalTrafficPolicy=Local']),
      'Service',
      'kapi-apiserver',
    );
    expect(local.spec!.externalTrafficPolicy).toBe('Local');
    const clusterIp = findObject<V1Service>(await renderChart([]), 'Service', 'kapi-apiserver');
    expect(clusterIp.spec!.externalTrafficPolicy).toBeUndefined();
  });

  test('when service.exposeMetrics=true, then the Service also publishes port 9091', async () => {
    const service = findObject<V1Service>(await renderChart(['--set', 'service.exposeMetrics=true']), 'Service', 'kapi-apiserver');
    expect(service.spec!.ports!.find((port) => port.name === 'metrics')).toMatchObject({ port: 9091, targetPort: 'metrics' });
  });

  test('when replicaCount=1, then there is no PodDisruptionBudget (it would block every node drain)', async () => {
    const objects = await renderChart(['--set', 'replicaCount=1']);
    expect(findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver').spec!.replicas).toBe(1);
    expect(objectsOfKind(objects, 'PodDisruptionBudget')).toEqual([]);
  });

  test('when installed into another namespace, then the server watches that namespace\'s configuration and key', async () => {
    const objects = await renderChart([], 'platform');
    const deployment = findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver');
    expect(env(deployment)).toMatchObject({
      KAPI_CLUSTER_CONFIGURATION: 'platform/kapi',
      KAPI_SIGNING_KEY_SECRET: 'platform/kapi-apiserver-jwt',
    });
    for (const object of objects.filter((candidate) => candidate.metadata.namespace !== undefined)) {
      expect(object.metadata.namespace).toBe('platform');
    }
  });

  test('when connection values are set, then the server gets them', async () => {
    const objects = await renderChart([
      '--set',
      'connections.readTimeout=2m,connections.maxPerClient=0,connections.maxRequestBodyBytes=10485760',
    ]);
    expect(env(findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver'))).toMatchObject({
      READ_TIMEOUT: '2m',
      MAX_CONNECTIONS_PER_CLIENT: '0',
      MAX_REQUEST_BODY_BYTES: '10485760',
    });
  });

  test('when rendered with default values, then the image’s jemalloc is preloaded with its settings, glibc’s kept for where it is not; null leaves the defaults', async () => {
    const defaults = env(findObject<V1Deployment>(await renderChart(), 'Deployment', 'kapi-apiserver'));
    expect(defaults).toMatchObject({
      LD_PRELOAD: '/usr/local/lib/libjemalloc.so.2',
      MALLOC_CONF: 'background_thread:true,narenas:2',
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '131072',
      MALLOC_TRIM_THRESHOLD_: '131072',
    });
    // the image sets the same (a pod of the image without the chart's values behaves alike)
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const words = dockerfile.split(/\s+/);
    for (const name of ['LD_PRELOAD', 'MALLOC_CONF', 'MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_']) {
      expect(words).toContain(`${name}=${defaults[name]}`);
    }
    expect(dockerfile).toMatch(/ln -s \/usr\/lib\/\*-linux-gnu\/libjemalloc\.so\.2 \/usr\/local\/lib\/libjemalloc\.so\.2/);
    const objects = await renderChart(['--set', 'malloc.jemalloc=null,malloc.arenaMax=null,malloc.trimThreshold=null']);
    const variables = env(findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver'));
    expect(variables.MALLOC_MMAP_THRESHOLD_).toBe('131072');
    expect(['LD_PRELOAD', 'MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_'].filter((name) => name in variables)).toEqual([]);
  });

  test('when tls.secretName is set, then the server reads its certificate from that Secret in its namespace', async () => {
    const objects = await renderChart(['--set', 'tls.secretName=kapi-tls']);
    expect(env(findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver')).TLS_SECRET).toBe('kapi-system/kapi-tls');
  });
});
