import { backoffDelay } from '../kube/backoff.js';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import { nextConditions, type Verdict } from './configuration-conditions.js';
import type { ClusterConfigurationObject } from './configuration-object.js';

export interface ConditionWriterOptions {
  client: KubeClient;
  log: Logger;
  /** The object's path; the writer patches `<objectPath>/status`. */
  objectPath: string;
  signal: AbortSignal;
  /** Asks the owner to evaluate again after `ms` (0: as soon as possible), which calls `write` with fresh state. */
  reevaluate(ms: number): void;
}

/**
 * Writes Valid/Ready to a ClusterConfiguration's status subresource when they differ from what the object carries:
 * one write at a time, conditional on the resourceVersion it was computed from, transient failures retried with
 * backoff, persistent ones (403 without RBAC for the status subresource, 404 deleted meanwhile, 422) logged once
 * and left for the next change.
 */
export class ConditionWriter {
  private writing = false;
  private again = false;
  private failures = 0;
  /** The resourceVersion our last successful write was based on: its MODIFIED event may not have arrived yet. */
  private patchedAt: string | undefined;
  private lastFailureLogged = '';

  constructor(private readonly options: ConditionWriterOptions) {}

  async write(object: ClusterConfigurationObject, verdict: Verdict): Promise<void> {
    const { uid, resourceVersion, generation } = object.metadata;
    const conditions = nextConditions(object.status?.conditions, verdict, generation, new Date());
    if (!conditions || !uid) return;
    if (resourceVersion !== undefined && this.patchedAt === resourceVersion) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    this.writing = true;
    try {
      await this.options.client.request({
        method: 'PATCH',
        path: `${this.options.objectPath}/status`,
        contentType: 'application/merge-patch+json',
        // uid and resourceVersion make the patch conditional: a concurrent change wins, and its event re-evaluates
        body: { metadata: { uid, resourceVersion }, status: { conditions } },
        signal: this.options.signal,
        timeoutMs: 10_000,
      });
      this.patchedAt = resourceVersion;
      this.failures = 0;
      this.options.log.debug('status conditions written', { generation, valid: verdict.valid });
    } catch (error) {
      if (!this.options.signal.aborted) this.noteFailure(error, generation);
    } finally {
      this.writing = false;
      if (this.again) {
        this.again = false;
        this.options.reevaluate(0);
      }
    }
  }

  private noteFailure(error: unknown, generation: number | undefined): void {
    const code = error instanceof KubeApiError ? error.code : 0;
    const message = String((error as Error)?.message ?? error);
    // 409: the object moved on and its event is on the way (retried anyway, in case it is not)
    const transient = code === 0 || code === 409 || code === 429 || code >= 500;
    if (transient) this.options.reevaluate(backoffDelay(++this.failures));
    const logKey = `${code}:${generation}`;
    if (code === 409 || this.lastFailureLogged === logKey) {
      this.options.log.debug('writing status conditions failed', { code, error: message });
      return;
    }
    this.lastFailureLogged = logKey;
    this.options.log.warn('writing status conditions failed', { code, error: message, retrying: transient });
  }
}
