import { apiVersionOf, STANDARD_VERBS, type ResourceRegistry, type ResourceType } from './resource-types.js';

/**
 * Discovery documents (/api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>) built from the registry, plus
 * the review resources that are not stored. This is what kubectl reads to map `get no` to /api/v1/nodes.
 */
interface VirtualResource {
  group: string;
  version: string;
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Review resources: create-only, answered by the policy, never stored. */
export const REVIEW_RESOURCES: readonly VirtualResource[] = [
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    name: 'localsubjectaccessreviews',
    kind: 'LocalSubjectAccessReview',
    namespaced: true,
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    name: 'selfsubjectaccessreviews',
    kind: 'SelfSubjectAccessReview',
    namespaced: false,
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    name: 'selfsubjectrulesreviews',
    kind: 'SelfSubjectRulesReview',
    namespaced: false,
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    name: 'subjectaccessreviews',
    kind: 'SubjectAccessReview',
    namespaced: false,
  },
];

const SUBRESOURCE_DOCS: Record<string, { kind?: string; verbs: string[] }> = {
  status: { verbs: ['get', 'patch', 'update'] },
  log: { verbs: ['get'] },
  exec: { kind: 'PodExecOptions', verbs: ['create', 'get'] },
  attach: { kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  portforward: { kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
};

/** Built-in groups first, in kube's priority order; custom groups after, by name. */
const GROUP_ORDER = [
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'batch',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'apiextensions.k8s.io',
];

function resourceEntries(type: ResourceType): Record<string, unknown>[] {
  const entry: Record<string, unknown> = {
    name: type.resource,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: [...STANDARD_VERBS],
  };
  if (type.shortNames.length) entry.shortNames = type.shortNames;
  if (type.categories.length) entry.categories = type.categories;
  const entries = [entry];
  for (const sub of type.subresources) {
    const doc = SUBRESOURCE_DOCS[sub];
    if (!doc) continue;
    entries.push({
      name: `${type.resource}/${sub}`,
      singularName: '',
      namespaced: type.namespaced,
      kind: doc.kind ?? type.kind,
      verbs: doc.verbs,
    });
  }
  return entries;
}

/**
 * The Kubernetes minor versions the sandbox can play. Each serves SelfSubjectReview (`kubectl auth whoami`) where that
 * release does: v1alpha1 in 1.26 (behind its feature gate, on here), v1beta1 from 1.27, v1 from 1.28.
 */
export const OLDEST_KUBERNETES_MINOR = 26;
export const NEWEST_KUBERNETES_MINOR = 35;

export function selfSubjectReviewVersion(minor: number): string {
  if (minor >= 28) return 'v1';
  return minor === 27 ? 'v1beta1' : 'v1alpha1';
}

/**
 * `/version` of the release the sandbox plays. The emulation and compatibility versions are there from 1.33 (the
 * compatibility-versions work); 1.26 and 1.32 answer without them, as their kits show.
 */
export function versionInfo(minor: number): Record<string, string> {
  const info: Record<string, string> = {
    ...SANDBOX_VERSION,
    minor: String(minor),
    emulationMinor: String(minor),
    minCompatibilityMinor: String(minor - 1),
    gitVersion: `v1.${minor}.0`,
  };
  if (minor < 33) {
    for (const field of ['emulationMajor', 'emulationMinor', 'minCompatibilityMajor', 'minCompatibilityMinor']) {
      delete info[field];
    }
  }
  return info;
}

export class Discovery {
  private readonly reviews: readonly VirtualResource[];

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly serverAddress: () => string,
    readonly kubernetesMinor = NEWEST_KUBERNETES_MINOR,
  ) {
    this.reviews = [
      {
        group: 'authentication.k8s.io',
        version: selfSubjectReviewVersion(kubernetesMinor),
        name: 'selfsubjectreviews',
        kind: 'SelfSubjectReview',
        namespaced: false,
      },
      ...REVIEW_RESOURCES,
    ];
  }

  /** group → versions (preferred first). */
  private groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    const add = (group: string, version: string): void => {
      const versions = groups.get(group) ?? [];
      if (!versions.includes(version)) versions.push(version);
      groups.set(group, versions);
    };
    for (const type of this.registry.all()) for (const v of type.versions) add(type.group, v);
    for (const r of this.reviews) add(r.group, r.version);
    return groups;
  }

  apiVersions(): unknown {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.serverAddress() }],
    };
  }

  private groupDoc(name: string, versions: string[]): Record<string, unknown> {
    const list = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: list, preferredVersion: list[0] };
  }

  apiGroupList(): unknown {
    const groups = [...this.groups().entries()].filter(([name]) => name !== '');
    const rank = (name: string): number => {
      const i = GROUP_ORDER.indexOf(name);
      return i === -1 ? GROUP_ORDER.length : i;
    };
    groups.sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: groups.map(([name, versions]) => this.groupDoc(name, versions)),
    };
  }

  apiGroup(group: string): unknown | undefined {
    const versions = this.groups().get(group);
    if (!group || !versions) return undefined;
    return { kind: 'APIGroup', apiVersion: 'v1', ...this.groupDoc(group, versions) };
  }

  /** /api/v1 or /apis/<group>/<version>; undefined when that group version is not served. */
  resourceList(group: string, version: string): unknown | undefined {
    const resources: Record<string, unknown>[] = [];
    for (const type of this.registry.all()) {
      if (type.group === group && type.versions.includes(version)) resources.push(...resourceEntries(type));
    }
    for (const r of this.reviews) {
      if (r.group === group && r.version === version) {
        resources.push({
          name: r.name,
          singularName: r.name.replace(/s$/, ''),
          namespaced: r.namespaced,
          kind: r.kind,
          verbs: ['create'],
        });
      }
    }
    if (resources.length === 0) return undefined;
    resources.sort((a, b) => String(a.name).localeCompare(String(b.name)));
    const list: Record<string, unknown> = { kind: 'APIResourceList' };
    if (group) list.apiVersion = 'v1';
    list.groupVersion = apiVersionOf(group, version);
    list.resources = resources;
    return list;
  }
}

export const SANDBOX_VERSION = {
  major: '1',
  minor: '35',
  emulationMajor: '1',
  emulationMinor: '35',
  minCompatibilityMajor: '1',
  minCompatibilityMinor: '34',
  gitVersion: 'v1.35.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-12-17T00:00:00Z',
  goVersion: 'go1.25.5',
  compiler: 'gc',
  platform: 'linux/amd64',
};
