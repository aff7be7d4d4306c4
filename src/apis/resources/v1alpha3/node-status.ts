import type { V1Node } from '@kubernetes/client-node';

export const NODE_STATUSES = ['running', 'warning', 'unschedulable'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

/**
 * The condition statuses of a healthy node (KubeSphere's expectedConditions). Any of these conditions in another
 * status makes the node "warning"; conditions not listed here (custom ones from node-problem-detector) are ignored.
 */
const HEALTHY: Readonly<Record<string, string>> = {
  MemoryPressure: 'False',
  DiskPressure: 'False',
  PIDPressure: 'False',
  NetworkUnavailable: 'False',
  ConfigOK: 'True',
  KubeletReady: 'True',
  Ready: 'True',
};

/** KubeSphere's getNodeStatus: cordoned first, then any unhealthy condition, otherwise running. */
export function nodeStatus(node: V1Node): NodeStatus {
  if (node.spec?.unschedulable === true) return 'unschedulable';
  for (const condition of node.status?.conditions ?? []) {
    const healthy = Object.hasOwn(HEALTHY, condition.type) ? HEALTHY[condition.type] : undefined;
    if (healthy !== undefined && condition.status !== healthy) return 'warning';
  }
  return 'running';
}
