import { createHash } from 'node:crypto';

/**
 * What a kubelet would report for a pod whose containers have been running since `startedAt`. The sandbox has no
 * kubelet: a test or the bench writes this to a pod's `status` so that its log API serves the containers.
 */
export function runningPodStatus(containers: readonly { name: string; image: string }[], startedAt: Date) {
  return {
    phase: 'Running',
    containerStatuses: containers.map((container) => ({
      name: container.name,
      ready: true,
      restartCount: 0,
      image: container.image,
      imageID: '',
      // a runtime's id, as every kubelet reports for a started container (clients tell started containers by it)
      containerID: `containerd://${createHash('sha256').update(`${container.name}@${startedAt.toISOString()}`).digest('hex')}`,
      state: { running: { startedAt: startedAt.toISOString() } },
    })),
  };
}
