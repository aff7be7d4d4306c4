import type { Authorizer } from '../../../auth/identity.js';
import type { LoggingOptions } from '../../../config/options.js';
import type { KubeClient } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import type { NamespaceList } from './access.js';
import type { LogBackend } from './log-backend.js';
import { PodLogBackend } from './pod-log/pod-log-backend.js';
import type { PodSource } from './pod-log/containers.js';
import { LogRequestLimits } from './request-limits.js';
import { loggingRoutes, type LoggingRouters } from './routes.js';

export interface LoggingDeps {
  options: LoggingOptions;
  client: KubeClient;
  /** The watched pods by namespace (pod-log backend). */
  pods: PodSource;
  namespaces: NamespaceList;
  authorizer: Authorizer | undefined;
  logger: Logger;
}

export interface Logging {
  readonly routers: LoggingRouters;
  readonly backend: LogBackend;
  close(): Promise<void>;
}

/** The logging API with the backend the options choose: the pod-log API (default) or OpenSearch. */
export async function createLogging(deps: LoggingDeps): Promise<Logging> {
  const backend = await createBackend(deps);
  deps.logger.info('logging API ready', { backend: backend.name });
  return {
    backend,
    routers: loggingRoutes({
      backend,
      authorizer: deps.authorizer,
      namespaces: deps.namespaces,
      logger: deps.logger,
      limits: new LogRequestLimits(deps.options.limits),
      writeTimeoutMs: deps.options.writeTimeoutMs,
    }),
    close: async () => backend.close?.(),
  };
}

async function createBackend(deps: LoggingDeps): Promise<LogBackend> {
  const { options } = deps;
  if (options.backend === 'opensearch') {
    // Loaded only when chosen: the pod-log backend needs no search client in memory.
    const { createSearchBackend } = await import('./search/create-search-backend.js');
    return createSearchBackend({ options, client: deps.client, logger: deps.logger });
  }
  return new PodLogBackend({
    client: deps.client,
    pods: deps.pods,
    concurrency: options.readConcurrency,
    maxContainers: options.maxContainers,
  });
}
