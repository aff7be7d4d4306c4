import type { IdentityProviderSettings } from '../../../config/cluster-configuration.js';

/**
 * What the console's bootstrap routes answer (pure). KubeSphere 3.4.1's shapes: `pkg/version.Info`, its configz map
 * of booleans, the identity providers of its oauth options (here without any setting or secret).
 */

/** The KubeSphere API level kapi serves: the 3.4 console chooses its 3.4 routes (tenant v1alpha3, …) by it. */
export const KUBESPHERE_API_LEVEL = { gitVersion: 'v3.4.1', gitMajor: '3', gitMinor: '4' } as const;

export interface KubernetesVersion {
  major: string;
  minor: string;
  gitVersion: string;
  [field: string]: unknown;
}

export function versionInfo(kapiVersion: string, kubernetes: KubernetesVersion | undefined, node = process.version) {
  return {
    ...KUBESPHERE_API_LEVEL,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node-${node}`,
    compiler: 'kapi',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    ...(kubernetes && { kubernetes }),
    kapi: { version: kapiVersion },
  };
}

/**
 * KubeSphere 3.4.1's configz keys. The console tests each for truth (false or missing: the module's menus hidden), so
 * every key kapi does not serve is an explicit false; `openpitrix` included, which 3.4.1 always sets.
 */
const MODULES = [
  'alerting',
  'auditing',
  'authentication',
  'authorization',
  'cache',
  'devops',
  'edgeruntime',
  'events',
  'gateway',
  'gpu',
  'kubeedge',
  'kubernetes',
  'logging',
  'metering',
  'monitoring',
  'multicluster',
  'network',
  'network.ippool',
  'network.topology',
  'notification',
  'openpitrix',
  'openpitrix.appstore',
  's3',
  'servicemesh',
  'sonarqube',
  'terminal',
] as const;

/**
 * What kapi serves of them: the Kubernetes API and its own accounts; logging (its logging API answers every query of
 * the console's Log Search, from the pods' logs or a search engine, and the Log Receivers and project Log Collection
 * pages read the cluster's own objects: Fluent Bit's outputs, absent from a cluster without the operator, list empty
 * there); events (Event Search, from the cluster's own events); monitoring once the ClusterConfiguration names a
 * backend. `auditing` stays off: kapi has no audit store to search. The console shows a module's tools exactly when
 * its flag is on.
 */
const SERVED: ReadonlySet<string> = new Set(['authentication', 'authorization', 'kubernetes', 'logging', 'events']);

export function configz(served: { monitoring: boolean } = { monitoring: false }): Record<string, boolean> {
  return Object.fromEntries(
    MODULES.map((module) => [module, SERVED.has(module) || (module === 'monitoring' && served.monitoring)]),
  );
}

export function oauthConfig(providers: readonly IdentityProviderSettings[]) {
  return {
    identityProviders: providers.map((p) => ({ name: p.name, type: p.type, mappingMethod: p.mappingMethod })),
  };
}
