import { toNodeItem } from '../../../../src/apis/resources/v1alpha3/node-item.js';
import { deepFreeze, node } from './fixtures.js';

describe('toNodeItem', () => {
  const cached = deepFreeze({
    ...node('k8s-worker-1', {
      labels: { 'node-role.kubernetes.io/worker': '', 'kubernetes.io/hostname': 'k8s-worker-1' },
      annotations: { 'flannel.alpha.coreos.com/backend-data': '{"VNI":1,"VtepMAC":"aa:bb"}' },
    }),
  });

  it('when a node is shaped, then kind, apiVersion and the seed metadata fields are set, in the seed order', () => {
    const item = toNodeItem(cached);
    expect(item.kind).toBe('Node');
    expect(item.apiVersion).toBe('v1');
    expect(Object.keys(item.metadata ?? {})).toEqual([
      'name',
      'selfLink',
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'labels',
      'annotations',
    ]);
    expect(item.metadata?.selfLink).toBe('/api/v1/nodes/k8s-worker-1');
  });

  it('when labels are empty strings and annotations hold JSON text, then both pass through verbatim', () => {
    const item = JSON.parse(JSON.stringify(toNodeItem(cached)));
    expect(item.metadata.labels['node-role.kubernetes.io/worker']).toBe('');
    expect(item.metadata.annotations['flannel.alpha.coreos.com/backend-data']).toBe('{"VNI":1,"VtepMAC":"aa:bb"}');
  });

  it('when the node has other metadata, then it is kept and spec and status are the same objects', () => {
    const withExtras = deepFreeze({
      ...cached,
      metadata: { ...cached.metadata, finalizers: ['x'], selfLink: '/stale' },
    });
    const item = toNodeItem(withExtras);
    expect(item.metadata?.finalizers).toEqual(['x']);
    expect(item.metadata?.selfLink).toBe('/api/v1/nodes/k8s-worker-1');
    expect(item.spec).toBe(withExtras.spec);
    expect(item.status).toBe(withExtras.status);
  });

  it('when the node has empty labels, then they stay an empty map', () => {
    const bare = deepFreeze({ ...cached, metadata: { ...cached.metadata, labels: {} } });
    expect(toNodeItem(bare).metadata?.labels).toEqual({});
  });
});
