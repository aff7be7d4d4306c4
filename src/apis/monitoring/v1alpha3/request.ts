import { InvalidParameterError } from '../../../server/errors.js';
import type { Names } from './selectors.js';
import type { PodPair } from './targets.js';

/**
 * A monitoring request's parameters as KubeSphere 3.4.1 reads them (helper.go `parseRequestParams`,
 * `makeQueryOptions`; pure), each bad value a 400 naming the parameter. Where KubeSphere pastes a regex a caller
 * sent into PromQL, kapi takes only what its console sends, a list of names (`name1|name2$`), and builds the regex
 * itself (selectors.ts).
 */

/** KubeSphere's default step, and Prometheus's most points per series (beyond it every metric would fail). */
export const DEFAULT_STEP_SECONDS = 600;
export const MAX_POINTS = 11_000;
export const MAX_NAMES = 200;
export const MAX_FILTER_LENGTH = 8192;
/** A Kubernetes object name (the widest form: DNS subdomains, and the dots and underscores some kinds allow). */
export const RESOURCE_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,251}[A-Za-z0-9])?$/;

export type Timing = { instant: number } | { start: number; end: number; step: number };

export interface Sorting {
  metric: string;
  order: 'asc' | 'desc';
  page: number;
  limit: number;
}

export interface MetricsQuery {
  /** Whether a named metric is asked for (metrics_filter). */
  wants(metric: string): boolean;
  filter: Names;
  pairs?: PodPair[];
  timing: Timing;
  sorting?: Sorting;
  type?: string;
}

export interface RawParameters {
  metrics_filter?: string;
  resources_filter?: string;
  namespaced_resources_filter?: string;
  time?: number;
  start?: number;
  end?: number;
  step?: string;
  sort_metric?: string;
  sort_type?: 'asc' | 'desc';
  page?: number;
  limit?: number;
  type?: string;
}

/** Go's `time.ParseDuration` (`600s`, `1m`, `1h30m`, `1.5h`), in seconds; undefined when it is none. */
export function parseGoDuration(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h)(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))*$/.test(text))
    return undefined;
  let seconds = 0;
  for (const [, value, unit] of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g))
    seconds += Number(value) * (units[unit as string] as number);
  return seconds;
}

/**
 * `metrics_filter` with RE2's semantics for what the console sends: alternatives of metric names, matched anywhere in
 * the name (`a|b|c$`: only the last alternative is anchored, so `node_load1` also picks `node_load15`, as in
 * KubeSphere), each with `^`, `$` and `.*` where it has them. Anything else is a 400: kapi runs no regex a caller
 * wrote (a backtracking engine would be a denial of service).
 */
export function metricsFilter(text: string | undefined): (metric: string) => boolean {
  if (text === undefined || text === '' || text === '.*') return () => true;
  // a console sends the same few filters again and again: each is read once
  const known = filters.get(text);
  if (known) return known;
  const filter = readMetricsFilter(text);
  if (filters.size >= MAX_KNOWN_FILTERS) filters.clear();
  filters.set(text, filter);
  return filter;
}

const filters = new Map<string, (metric: string) => boolean>();
const MAX_KNOWN_FILTERS = 512;

function readMetricsFilter(text: string): (metric: string) => boolean {
  if (text.length > MAX_FILTER_LENGTH)
    throw new InvalidParameterError('metrics_filter', `is longer than ${MAX_FILTER_LENGTH} characters`);
  const branches = text.split('|').map((branch) => {
    const match = /^(\^?)((?:[A-Za-z0-9_:]|\.\*)*)(\$?)$/.exec(branch);
    if (!match)
      throw new InvalidParameterError(
        'metrics_filter',
        `"${branch.slice(0, 64)}" is not a metric name pattern: names, "|", ".*", "^" and "$" only`,
      );
    const [, start, body, end] = match as unknown as [string, string, string, string];
    return globMatcher(start === '^', body.split('.*'), end === '$');
  });
  return (metric) => branches.some((matches) => matches(metric));
}

/**
 * Whether a name holds `parts` in order, with anything between them (`.*`): from its start or anywhere, to its end
 * or not. Each part is found at its leftmost place after the one before, so a match costs one pass over the name,
 * whatever the pattern (a backtracking regex of many `.*` would not).
 */
export function globMatcher(fromStart: boolean, parts: readonly string[], toEnd: boolean): (name: string) => boolean {
  const first = parts[0] as string;
  const last = parts.at(-1) as string;
  const middle = parts.slice(1, -1);
  if (parts.length === 1)
    return (name) =>
      fromStart && toEnd
        ? name === first
        : fromStart
          ? name.startsWith(first)
          : toEnd
            ? name.endsWith(first)
            : name.includes(first);
  return (name) => {
    let at: number;
    if (fromStart) {
      if (!name.startsWith(first)) return false;
      at = first.length;
    } else {
      const found = name.indexOf(first);
      if (found < 0) return false;
      at = found + first.length;
    }
    for (const part of middle) {
      const found = name.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
    return toEnd ? name.length - last.length >= at && name.endsWith(last) : name.indexOf(last, at) >= 0;
  };
}

/** A list of names as the console sends it (`a|b|c$`, `^a$`, `.*` or nothing for all), each checked as a name. */
export function namesOf(parameter: string, text: string | undefined): Names {
  if (text === undefined || text === '' || text === '.*') return { all: true };
  if (text.length > MAX_FILTER_LENGTH)
    throw new InvalidParameterError(parameter, `is longer than ${MAX_FILTER_LENGTH} characters`);
  const names = text.split('|').map((alternative) => alternative.replace(/^\^/, '').replace(/\$$/, ''));
  if (names.length > MAX_NAMES) throw new InvalidParameterError(parameter, `names at most ${MAX_NAMES} resources`);
  for (const name of names)
    if (!RESOURCE_NAME.test(name))
      throw new InvalidParameterError(
        parameter,
        `"${name.slice(0, 64)}" is not a resource name: give names separated by "|" (e.g. "pod-a|pod-b$")`,
      );
  return { names: [...new Set(names)] };
}

/** `namespaced_resources_filter`: `ns/pod|ns/pod$` (a pod alone: any namespace). */
export function pairsOf(text: string | undefined): PodPair[] | undefined {
  if (text === undefined || text === '') return undefined;
  const parameter = 'namespaced_resources_filter';
  if (text.length > MAX_FILTER_LENGTH)
    throw new InvalidParameterError(parameter, `is longer than ${MAX_FILTER_LENGTH} characters`);
  const items = text.split('|').map((item) => item.replace(/^\^/, '').replace(/\$$/, ''));
  if (items.length > MAX_NAMES) throw new InvalidParameterError(parameter, `names at most ${MAX_NAMES} pods`);
  return items.map((item) => {
    const [first, second, ...rest] = item.split('/');
    const pair = second === undefined ? { pod: first as string } : { namespace: first as string, pod: second };
    if (
      rest.length > 0 ||
      !RESOURCE_NAME.test(pair.pod) ||
      (pair.namespace !== undefined && !RESOURCE_NAME.test(pair.namespace))
    )
      throw new InvalidParameterError(parameter, `"${item.slice(0, 64)}" is not namespace/pod`);
    return pair;
  });
}

/** The request's parameters, checked; `now` in whole Unix seconds. */
export function metricsQueryOf(raw: RawParameters, now: number): MetricsQuery {
  let timing: Timing;
  if (raw.start !== undefined || raw.end !== undefined) {
    if (raw.time !== undefined)
      throw new InvalidParameterError('time', "'time' and the combination of 'start' and 'end' are mutually exclusive");
    if (raw.start === undefined) throw new InvalidParameterError('start', 'is required with end (a range query)');
    if (raw.end === undefined) throw new InvalidParameterError('end', 'is required with start (a range query)');
    if (raw.start > raw.end) throw new InvalidParameterError('start', `${raw.start} is after end ${raw.end}`);
    let step = DEFAULT_STEP_SECONDS;
    if (raw.step !== undefined) {
      const parsed = parseGoDuration(raw.step);
      // whole seconds: a range's points are at start + k·step, whole Unix seconds as the console keys them
      if (parsed === undefined || parsed < 1 || !Number.isInteger(parsed))
        throw new InvalidParameterError(
          'step',
          `"${raw.step.slice(0, 32)}" is not a whole number of seconds, at least 1s (e.g. 600s, 10m)`,
        );
      step = parsed;
    }
    const points = Math.floor((raw.end - raw.start) / step) + 1;
    if (points > MAX_POINTS)
      throw new InvalidParameterError(
        'step',
        `gives ${points} points per series from start to end; at most ${MAX_POINTS} (a larger step, or a shorter range)`,
      );
    timing = { start: raw.start, end: raw.end, step };
  } else timing = { instant: raw.time ?? now };
  if (raw.page !== undefined && raw.page < 1) throw new InvalidParameterError('page', 'must be 1 or more');
  if (raw.limit !== undefined && raw.limit < 1) throw new InvalidParameterError('limit', 'must be 1 or more');
  const sorting =
    raw.sort_metric && 'instant' in timing
      ? { metric: raw.sort_metric, order: raw.sort_type ?? 'desc', page: raw.page ?? 1, limit: raw.limit ?? 5 }
      : undefined;
  const pairs = pairsOf(raw.namespaced_resources_filter);
  return {
    wants: metricsFilter(raw.metrics_filter),
    filter: namesOf('resources_filter', raw.resources_filter),
    ...(pairs && { pairs }),
    timing,
    ...(sorting && { sorting }),
    ...(raw.type && { type: raw.type }),
  };
}
