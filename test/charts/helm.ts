/**
 * The real helm binary (fetched by `make tools`) run against charts/kapi-apiserver, and its output as objects.
 * Helm's own cache and config go to .cache/helm, so the tests touch nothing in $HOME.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const REPO_ROOT = process.cwd();
export const CHART_DIR = path.join(REPO_ROOT, 'charts', 'kapi-apiserver');
export const RELEASE = 'kapi-apiserver';
export const NAMESPACE = 'kapi-system';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The helm binary: $KAPI_HELM (the Makefile sets it) or .cache/tools/helm/helm. */
export function helmBinary(): string {
  const helm = process.env.KAPI_HELM || path.join(REPO_ROOT, '.cache', 'tools', 'helm', 'helm');
  if (!existsSync(helm)) {
    throw new Error(`helm not found at ${helm}: run \`make tools\` (it fetches helm v4.1 into .cache/tools) first`);
  }
  return helm;
}

const HELM_HOME = path.join(REPO_ROOT, '.cache', 'helm');

/** Runs helm; a non-zero exit is a result, not an exception. */
export function helm(args: readonly string[]): Promise<HelmResult> {
  const binary = helmBinary();
  const env = {
    ...process.env,
    HELM_CACHE_HOME: path.join(HELM_HOME, 'cache'),
    HELM_CONFIG_HOME: path.join(HELM_HOME, 'config'),
    HELM_DATA_HOME: path.join(HELM_HOME, 'data'),
  };
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      [...args],
      { cwd: REPO_ROOT, env, timeout: 30_000, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/** `--set key=value` arguments, one pair per entry. */
export function setValues(values: Record<string, string | number | boolean>): string[] {
  return Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${String(value)}`]);
}

/** `helm template` of the chart as release kapi-apiserver; throws with helm's message when rendering fails. */
export async function renderChart(args: readonly string[] = [], namespace = NAMESPACE): Promise<KubeObject[]> {
  const result = await helm(['template', RELEASE, CHART_DIR, '--namespace', namespace, ...args]);
  if (result.code !== 0) throw new Error(`helm template ${args.join(' ')} failed: ${result.stderr}`);
  return parseObjects(result.stdout);
}

/** The objects of a multi-document YAML stream (empty documents dropped); throws on a YAML error. */
export function parseObjects(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]!.message}`);
      return doc.toJS() as KubeObject | null;
    })
    .filter((object): object is KubeObject => object !== null && typeof object === 'object');
}

export function objectsOfKind<T = KubeObject>(objects: readonly KubeObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as T[];
}

/** The one object of that kind and name; throws, listing what there is, when it is missing. */
export function findObject<T = KubeObject>(objects: readonly KubeObject[], kind: string, name: string): T {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) {
    const present = objects.map((object) => `${object.kind}/${object.metadata.name}`).join(', ');
    throw new Error(`no ${kind}/${name} in the rendered chart (it has ${present})`);
  }
  return found as T;
}
