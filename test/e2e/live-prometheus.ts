import { existsSync, readFileSync } from 'node:fs';
import { startPrometheus as startPrometheusProcess } from '../../src/sandbox/monitoring/prometheus.js';

export { startNodeExporter } from '../../src/sandbox/monitoring/prometheus.js';

/**
 * Debian's Prometheus for a suite (src/sandbox/monitoring/prometheus.ts starts and stops it), with what the suites
 * read of it: the queries asked over its HTTP API, from its query log.
 */
export interface LivePrometheus {
  readonly url: string;
  /** The queries asked over its HTTP API since it started, in order (rule evaluations left out). */
  apiQueries(): LoggedQuery[];
  stop(): Promise<void>;
}

export interface LoggedQuery {
  query: string;
  path: string;
  params: Record<string, unknown>;
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function startPrometheus(config: string, files: Record<string, string> = {}): Promise<LivePrometheus> {
  const started = await startPrometheusProcess(config, files);
  let stopped = false;
  return {
    url: started.url,
    apiQueries() {
      if (stopped || !existsSync(started.queryLog)) return [];
      return readFileSync(started.queryLog, 'utf8')
        .split('\n')
        .filter((text) => text.trim() !== '')
        .map((text) => JSON.parse(text) as { params?: Record<string, unknown>; httpRequest?: { path?: string } })
        .filter((entry) => entry.httpRequest !== undefined)
        .map((entry) => ({
          query: String(entry.params?.query ?? ''),
          path: String(entry.httpRequest?.path ?? ''),
          params: entry.params ?? {},
        }));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await started.stop();
    },
  };
}
