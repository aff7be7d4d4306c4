import { KubeApiError } from '../../../../kube/client.js';
import type { SkippedContainers } from '../log-backend.js';
import type { ContainerTarget } from './containers.js';

const EXAMPLES = 10;

/** Containers whose log could not be read during one request: counted, the first few named, never an error. */
export class SkipTracker {
  private readonly seen = new Set<number>();
  private readonly examples: SkippedContainers['examples'] = [];

  skip(target: ContainerTarget, error: unknown): void {
    if (this.seen.has(target.order)) return;
    this.seen.add(target.order);
    if (this.examples.length < EXAMPLES) {
      this.examples.push({
        namespace: target.namespace,
        pod: target.pod,
        container: target.container,
        reason: reasonOf(error),
      });
    }
  }

  has(target: ContainerTarget): boolean {
    return this.seen.has(target.order);
  }

  report(): SkippedContainers | undefined {
    return this.seen.size ? { containers: this.seen.size, examples: this.examples } : undefined;
  }
}

/** kube-apiserver's own message (e.g. `container "app" in pod "web" is waiting to start`), else the error's. */
function reasonOf(error: unknown): string {
  if (error instanceof KubeApiError) return `HTTP ${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
