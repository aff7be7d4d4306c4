/**
 * A pod's state as KubeSphere 3.4 derives it (pkg/models/resources/v1alpha3/pod getPodStatus, after `kubectl get
 * pods`' STATUS column): the reason kubectl would print, then one of four kinds of state. The `status` filter of the
 * pod listing matches the kind.
 */
export const POD_STATUSES = ['Running', 'Waiting', 'Error', 'Completed'] as const;
export type PodStatus = (typeof POD_STATUSES)[number];

interface ContainerState {
  waiting?: { reason?: string };
  running?: unknown;
  terminated?: { reason?: string; exitCode?: number; signal?: number };
}
interface ContainerStatus {
  ready?: boolean;
  state?: ContainerState;
}
interface Condition {
  type?: string;
  status?: string;
  reason?: string;
}
export interface PodLike {
  metadata?: { deletionTimestamp?: unknown };
  spec?: { initContainers?: unknown[] };
  status?: {
    phase?: string;
    reason?: string;
    conditions?: Condition[];
    initContainerStatuses?: ContainerStatus[];
    containerStatuses?: ContainerStatus[];
  };
}

/** kubectl's STATUS text of a pod (Running, ContainerCreating, Init:0/1, CrashLoopBackOff, Terminating, …). */
export function podReason(pod: PodLike): string {
  const status = pod.status ?? {};
  let reason = status.reason || status.phase || '';
  let initializing = false;
  const inits = status.initContainerStatuses ?? [];
  for (let i = 0; i < inits.length; i++) {
    const state = inits[i]?.state ?? {};
    const terminated = state.terminated;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (terminated) {
      if (!terminated.reason) {
        reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode ?? 0}`;
      } else reason = `Init:${terminated.reason}`;
    } else if (state.waiting?.reason && state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${state.waiting.reason}`;
    } else {
      reason = `Init:${i}/${pod.spec?.initContainers?.length ?? inits.length}`;
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    let hasRunning = false;
    const containers = status.containerStatuses ?? [];
    for (let i = containers.length - 1; i >= 0; i--) {
      const container = containers[i] ?? {};
      const state = container.state ?? {};
      if (state.waiting?.reason) reason = state.waiting.reason;
      else if (state.terminated?.reason) reason = state.terminated.reason;
      else if (state.terminated) {
        reason = state.terminated.signal
          ? `Signal:${state.terminated.signal}`
          : `ExitCode:${state.terminated.exitCode ?? 0}`;
      } else if (container.ready && state.running) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) {
      reason = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
        ? 'Running'
        : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

/** KubeSphere's kind of state for a reason; unknown reasons (ContainerCreating, Pending…) are Waiting. */
export function podStatus(pod: PodLike): PodStatus {
  const reason = podReason(pod);
  switch (reason) {
    case 'Running':
      return 'Running';
    case 'Failed':
    case 'Error':
      return 'Error';
    case 'Completed':
      return 'Completed';
    case 'Succeeded':
      // KubeSphere: Completed when no Ready condition gives another reason than PodCompleted
      return (pod.status?.conditions ?? []).every((c) => c.type !== 'Ready' || c.reason === 'PodCompleted')
        ? 'Completed'
        : 'Waiting';
    default:
      return reason.startsWith('OutOf') ? 'Error' : 'Waiting';
  }
}
