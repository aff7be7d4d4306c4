import type { Environment } from './environment.js';
import type { KapiProcess } from './kapi-process.js';
import type { Row } from './report.js';

/** What every scenario gets: the running sandbox and kapi, and the credentials to talk to each. */
export interface BenchContext {
  cores: number;
  env: Environment;
  kapi: KapiProcess;
  sandboxUrl: string;
  /** An access token of the admin User, issued by kapi (password grant). */
  kapiToken: string;
  /** A node that exists, for by-name requests and watch patches. */
  nodeName: string;
}

/** A scenario's outcome: its summary rows and its raw figures (for .cache/bench/last.json). */
export interface ScenarioResult {
  rows: Row[];
  figures: Record<string, unknown>;
}

/**
 * One SPEC §11 row family. `planned` are the rows it fills, used as "not measured: <why>" when the scenario cannot
 * run at all (a missing endpoint, a failed start).
 */
export interface Scenario {
  title: string;
  planned: { metric: string; target: string; reference?: string }[];
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

/** Standard durations: long enough for a stable p99 at thousands of req/s, short enough for a ~3 minute bench. */
export const WARMUP_MS = 1_000;
export const MEASURE_MS = 5_000;
