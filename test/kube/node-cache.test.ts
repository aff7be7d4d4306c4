import { afterEach, describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/client.js';
import { createNodeCache, toCachedNode } from '../../src/kube/node-cache.js';
import { createLogger } from '../../src/observability/logger.js';
import { FakeKubeApiserver, connectTo, eventually, node } from './fake-kube-apiserver.js';

describe('toCachedNode', () => {
  it('when a node is stored, then managedFields are dropped and everything else is kept', () => {
    const raw = node('n1', { zone: '', role: 'worker' });
    raw.metadata.annotations = { 'a.io/json': '{"k":[1,2]}' };
    const cached = toCachedNode(raw as V1Node);
    expect(cached.metadata).toEqual({
      name: 'n1',
      uid: 'uid-n1',
      labels: { zone: '', role: 'worker' },
      annotations: raw.metadata.annotations,
    });
    expect(cached.status).toEqual(raw.status);
    expect(raw.metadata.managedFields).toHaveLength(1); // the input is not changed
  });

  it('when a node comes from a list (no type fields), then it gets apiVersion and kind like a watched one', () => {
    const cached = toCachedNode({ metadata: { name: 'n1' } });
    expect([cached.apiVersion, cached.kind]).toEqual(['v1', 'Node']);
  });

  it('when a reader tries to annotate a cached node in place, then it throws instead of changing the cache', () => {
    const cached = toCachedNode(node('n1') as V1Node);
    expect(() => {
      cached.metadata!.annotations = { x: 'y' };
    }).toThrow(TypeError);
    expect(() => {
      cached.metadata!.labels!.zone = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (cached.status!.capacity as Record<string, string>).cpu = '1';
    }).toThrow(TypeError);
  });
});

describe('createNodeCache', () => {
  let stop: () => Promise<void> = async () => undefined;
  afterEach(() => stop());

  it('when nodes exist and change, then the cache serves them by name, with a moving revision', async () => {
    const fake = await FakeKubeApiserver.start('/api/v1/nodes');
    const connection = await connectTo(fake);
    const nodes = createNodeCache(new KubeClient(connection), createLogger('error', { silent: true }));
    stop = async () => {
      await nodes.stop();
      await fake.stop();
      connection.close();
    };
    fake.put(node('n1'));

    nodes.start();
    await nodes.waitForSync();
    expect(nodes.get('n1')?.metadata?.managedFields).toBeUndefined();
    expect(nodes.readiness.name).toBe('cache:nodes');
    const revision = nodes.revision;

    fake.put(node('n2'));
    await eventually(() => expect(nodes.list().map((n) => n.metadata?.name)).toEqual(['n1', 'n2']));
    expect(nodes.get('n2')?.kind).toBe('Node');
    expect(nodes.revision).toBeGreaterThan(revision);
  });
});
