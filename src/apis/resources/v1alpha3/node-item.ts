import type { V1Node, V1ObjectMeta } from '@kubernetes/client-node';

/**
 * A node as the listing returns it: kind and apiVersion always set (list items from kube-apiserver lack them),
 * metadata led by the seed's fields, and selfLink filled in, since kube-apiserver stopped setting it (1.20) and
 * KubeSphere clients still read it. Labels and annotations pass through verbatim. The input is not modified.
 */
export function toNodeItem(node: V1Node): V1Node {
  const metadata = node.metadata ?? {};
  const selfLink = `/api/v1/nodes/${encodeURIComponent(metadata.name ?? '')}`;
  const shaped: V1ObjectMeta = {
    name: metadata.name,
    selfLink,
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    creationTimestamp: metadata.creationTimestamp,
    labels: metadata.labels,
    annotations: metadata.annotations,
    ...metadata,
  };
  // After the spread (keeping its place): a stale selfLink from an old kube-apiserver names the same path anyway.
  shaped.selfLink = selfLink;
  return { kind: 'Node', apiVersion: 'v1', metadata: shaped, spec: node.spec, status: node.status };
}
