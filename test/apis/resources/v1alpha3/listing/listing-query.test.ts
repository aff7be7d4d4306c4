import { KINDS_BY_RESOURCE, type KindDefinition } from '../../../../../src/apis/resources/v1alpha3/kinds/kind-table.js';
import {
  objectRecord,
  bodyHeader,
  tableShape,
} from '../../../../../src/apis/resources/v1alpha3/kinds/object-record.js';
import { podStatus } from '../../../../../src/apis/resources/v1alpha3/kinds/pod-status.js';
import { parseListingQuery, slotFilter } from '../../../../../src/apis/resources/v1alpha3/listing/listing-query.js';
import { sortKeyOf } from '../../../../../src/apis/resources/v1alpha3/listing/resource-listing.js';
import { ObjectTable } from '../../../../../src/kube/compact/object-table.js';
import { InvalidParameterError } from '../../../../../src/server/errors.js';

const kind = (resource: string) => KINDS_BY_RESOURCE.get(resource) as KindDefinition;

describe('parseListingQuery', () => {
  test('when nothing is given, then KubeSphere’s defaults apply: page 1, every item, newest first', () => {
    const query = parseListingQuery(kind('pods'), {});
    expect(query).toMatchObject({ page: 1, limit: undefined, sortBy: 'creationTimestamp', ascending: false });
    expect(query.filter.key).toBe('');
  });

  test.each([
    ['deployments', 'lastUpdateTimestamp'],
    ['deployments', 'updateTime'],
    ['jobs', 'status'],
    ['cronjobs', 'lastScheduleTime'],
    ['events', 'lastTimestamp'],
    ['configmaps', 'createTime'],
  ])('when %s are sorted by %s (the kind’s own key), then it is accepted', (resource, sortBy) => {
    expect(parseListingQuery(kind(resource), { sortBy }).sortBy).toBe(sortBy);
  });

  test.each([
    ['services', { sortBy: 'lastUpdateTimestamp' }, 'sortBy'],
    ['pods', { status: 'running' }, 'status'],
    ['deployments', { status: 'Running' }, 'status'],
    ['configmaps', { status: 'x' }, undefined],
    ['pods', { page: '0' }, 'page'],
    ['pods', { limit: 'ten' }, 'limit'],
    ['pods', { ascending: 'yes' }, 'ascending'],
    ['pods', { label: 'a in (b' }, 'label'],
    ['pods', { annotation: '==' }, 'annotation'],
  ])('when %s get %o, then a 400 names %s (configmaps have no status: ignored)', (resource, query, parameter) => {
    if (parameter === undefined) {
      expect(() => parseListingQuery(kind(resource), query)).not.toThrow();
      return;
    }
    try {
      parseListingQuery(kind(resource), query);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect((error as InvalidParameterError).parameter).toBe(parameter);
    }
  });

  test('when a claim’s status is given in any case, then it is KubeSphere’s EqualFold match', () => {
    expect(parseListingQuery(kind('persistentvolumeclaims'), { status: 'Bound' }).filter.status).toBe(0);
    expect(parseListingQuery(kind('events'), { status: 'Warning' }).filter.status).toBe(1);
  });

  test('when the same filters come in another order, then their key is the same (one memoized result)', () => {
    const a = parseListingQuery(kind('pods'), { names: 'b,a', label: 'app=web', nodeName: 'n1' });
    const b = parseListingQuery(kind('pods'), { nodeName: 'n1', label: 'app=web', names: 'a,b', limit: '5' });
    expect(a.filter.key).toBe(b.filter.key);
    expect(a.filter.key).not.toBe('');
  });
});

describe('kind records and filters', () => {
  const pod = (name: string, extra: Record<string, unknown> = {}) => ({
    metadata: {
      name,
      namespace: 'demo',
      uid: '0b7f3c7e-1d2a-4f3b-9c4d-5e6f7a8b9c0d',
      resourceVersion: '1',
      creationTimestamp: '2025-01-01T00:00:00Z',
      labels: { app: 'web' },
      annotations: { 'kapi.io/alias-name': 'Front end' },
      ownerReferences: [{ kind: 'ReplicaSet', uid: 'rs-uid', name: 'web-1' }],
      managedFields: [{ manager: 'kubectl' }],
    },
    spec: { nodeName: 'node-1', volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] },
    status: { phase: 'Running', containerStatuses: [{ ready: true, state: { running: {} } }] },
    ...extra,
  });

  test('when a pod is read, then its body is kube’s answer (kind, apiVersion, no managedFields) and its columns are filled', () => {
    const definition = kind('pods');
    const record = objectRecord(definition, bodyHeader(definition), pod('web-1'));
    const body = JSON.parse(record.body.toString()) as Record<string, { managedFields?: unknown }>;
    expect(Object.keys(body).slice(0, 3)).toEqual(['kind', 'apiVersion', 'metadata']);
    expect(body.kind).toBe('Pod');
    expect(body.metadata?.managedFields).toBeUndefined();
    expect(record.fields).toEqual(['node-1', ['data'], 'Running']);
    expect(definition.status?.values[record.status]).toBe('Running');
  });

  test.each([
    [{ nodeName: 'node-1' }, true],
    [{ nodeName: 'node-2' }, false],
    [{ pvcName: 'data' }, true],
    [{ phase: 'Running' }, true],
    [{ ownerKind: 'ReplicaSet' }, true],
    [{ ownerReference: 'rs-uid' }, true],
    [{ ownerReference: 'other' }, false],
    [{ name: 'Front' }, true],
    [{ alias: 'end' }, true],
    [{ name: 'nothing' }, false],
    [{ annotation: 'kapi.io/alias-name' }, true],
    [{ status: 'Running' }, true],
    [{ status: 'Waiting' }, false],
    [{ uid: '0b7f3c7e-1d2a-4f3b-9c4d-5e6f7a8b9c0d' }, true],
  ])('when pods are filtered by %o, then the pod matches: %s', (query, matches) => {
    const definition = kind('pods');
    const table = new ObjectTable(tableShape(definition));
    const slot = table.upsert(objectRecord(definition, bodyHeader(definition), pod('web-1')));
    const filter = slotFilter(parseListingQuery(definition, query).filter, undefined);
    expect(filter?.matches(table, slot)).toBe(matches);
  });

  test('when CRDs are filtered by name, then the kind they define matches too (as KubeSphere’s filter)', () => {
    const definition = kind('customresourcedefinitions');
    const table = new ObjectTable(tableShape(definition));
    const slot = table.upsert(
      objectRecord(definition, bodyHeader(definition), {
        metadata: { name: 'users.iam.kapi.io', uid: 'u', resourceVersion: '1' },
        spec: { names: { kind: 'User' } },
      }),
    );
    const filter = slotFilter(parseListingQuery(definition, { name: 'User' }).filter, definition.fields.length);
    expect(filter?.matches(table, slot)).toBe(true);
  });

  test.each([
    ['deployments', { status: { replicas: 0, readyReplicas: 0 } }, 'stopped'],
    ['deployments', { status: { replicas: 3, readyReplicas: 3 } }, 'running'],
    ['deployments', { status: { replicas: 3, readyReplicas: 1 } }, 'updating'],
    ['statefulsets', { spec: { replicas: 2 }, status: { readyReplicas: 2 } }, 'running'],
    ['statefulsets', { spec: {}, status: {} }, 'stopped'],
    ['daemonsets', { status: { desiredNumberScheduled: 4, numberReady: 3 } }, 'updating'],
    ['jobs', { status: { conditions: [{ type: 'Complete', status: 'True' }] } }, 'completed'],
    ['jobs', { status: { conditions: [{ type: 'Failed', status: 'True' }] } }, 'failed'],
    ['jobs', { status: {} }, 'running'],
    ['cronjobs', { spec: { suspend: true } }, 'paused'],
    ['persistentvolumeclaims', { status: { phase: 'Lost' } }, 'lost'],
    ['persistentvolumes', { status: { phase: 'Released' } }, 'released'],
    ['namespaces', { status: { phase: 'Terminating' } }, 'Terminating'],
    ['events', { type: 'Warning' }, 'warning'],
  ])('when a %s is %o, then its status is %s (KubeSphere’s rule)', (resource, raw, status) => {
    const definition = kind(resource);
    const code = definition.status?.of(raw) ?? -1;
    expect(definition.status?.values[code]).toBe(status);
  });

  test('when a deployment’s conditions were updated after it was made, then its last update time is the latest', () => {
    const definition = kind('deployments');
    const time = definition.times[0]!.of({
      metadata: { creationTimestamp: '2025-01-01T00:00:00Z' },
      status: { conditions: [{ lastUpdateTime: '2025-03-01T00:00:00Z' }, { lastUpdateTime: '2025-02-01T00:00:00Z' }] },
    });
    expect(new Date(time).toISOString()).toBe('2025-03-01T00:00:00.000Z');
    expect(sortKeyOf(definition, 'updateTime').id).toBe('time:0');
    expect(sortKeyOf(definition, 'createTime').id).toBe('created');
  });
});

describe('podStatus (KubeSphere’s getPodStatus)', () => {
  test.each([
    [{ status: { phase: 'Running', containerStatuses: [{ ready: true, state: { running: {} } }] } }, 'Running'],
    [
      { status: { phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ContainerCreating' } } }] } },
      'Waiting',
    ],
    [
      { status: { phase: 'Running', containerStatuses: [{ state: { waiting: { reason: 'CrashLoopBackOff' } } }] } },
      'Waiting',
    ],
    [
      { status: { phase: 'Failed', containerStatuses: [{ state: { terminated: { reason: 'Error', exitCode: 1 } } }] } },
      'Error',
    ],
    [
      { status: { phase: 'Succeeded', containerStatuses: [{ state: { terminated: { reason: 'Completed' } } }] } },
      'Completed',
    ],
    [{ status: { phase: 'Failed', reason: 'OutOfcpu' } }, 'Error'],
    [{ status: { phase: 'Succeeded', conditions: [{ type: 'Ready', reason: 'PodCompleted' }] } }, 'Completed'],
    [{ metadata: { deletionTimestamp: '2025-01-01T00:00:00Z' }, status: { phase: 'Running' } }, 'Waiting'],
    [
      {
        spec: { initContainers: [{}] },
        status: { phase: 'Pending', initContainerStatuses: [{ state: { waiting: { reason: 'PodInitializing' } } }] },
      },
      'Waiting',
    ],
  ])('when a pod is %o, then its status is %s', (pod, status) => {
    expect(podStatus(pod)).toBe(status);
  });
});
