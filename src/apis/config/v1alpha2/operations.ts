import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { apiComponent, statusResponses } from '../../../openapi/schemas.js';

/**
 * The routes KubeSphere 3.4's console reads before and at every page load (SPEC §16): the version it chooses its
 * routes by, the identity providers its login page offers, the optional modules it shows, and the GPU kinds. The
 * first three are public (its login page reads them before anyone signs in); nothing else new is.
 */
export const CONFIG_BASE = '/kapis/config.kapi.io/v1alpha2';
export const VERSION_PATH = '/kapis/version';

const KubernetesVersionSchema = z.looseObject({
  major: z.string(),
  minor: z.string(),
  gitVersion: z.string(),
  gitCommit: z.string().optional(),
  gitTreeState: z.string().optional(),
  buildDate: z.string().optional(),
  goVersion: z.string().optional(),
  compiler: z.string().optional(),
  platform: z.string().optional(),
});

export const VersionSchema = apiComponent(
  'Version',
  z.object({
    gitVersion: z
      .string()
      .describe('The KubeSphere API level kapi serves (v3.4.x): 3.4 clients choose their 3.4 routes by it.'),
    gitMajor: z.string(),
    gitMinor: z.string(),
    gitCommit: z.string(),
    gitTreeState: z.string(),
    buildDate: z.string(),
    goVersion: z.string().describe('The runtime: Node.js’s version.'),
    compiler: z.string(),
    platform: z.string(),
    kubernetes: KubernetesVersionSchema.optional().describe(
      'kube-apiserver’s /version; absent while it cannot be read.',
    ),
    kapi: z.object({ version: z.string().describe('kapi-apiserver’s own version.') }),
  }),
);

export const OAuthConfigSchema = apiComponent(
  'OAuthConfig',
  z.object({
    identityProviders: z
      .array(
        z.object({
          name: z.string(),
          type: z.string().describe('LDAP or OIDC.'),
          mappingMethod: z.string(),
        }),
      )
      .describe('The configured identity providers, by name and type: no settings, no secret.'),
  }),
);

export const ConfigzSchema = apiComponent(
  'Configz',
  z
    .record(z.string(), z.boolean())
    .describe('One key per optional module of KubeSphere 3.4 (and `network.ippool`, …): true when kapi serves it.'),
);

export const GpuKindsSchema = apiComponent(
  'GpuKinds',
  z.array(z.object({ resourceName: z.string(), resourceType: z.string().optional(), default: z.boolean().optional() })),
);

export const getVersion = defineOperation({
  operationId: 'getVersion',
  method: 'get',
  path: VERSION_PATH,
  tags: ['config'],
  summary: 'The KubeSphere API level kapi serves, kube-apiserver’s version and kapi’s own',
  security: 'public',
  responses: { 200: { description: 'The versions.', body: VersionSchema } },
});

export const getOAuthConfig = defineOperation({
  operationId: 'getOAuthConfig',
  method: 'get',
  path: `${CONFIG_BASE}/configs/oauth`,
  tags: ['config'],
  summary: 'The identity providers a login page offers (names and types only)',
  security: 'public',
  responses: { 200: { description: 'The identity providers.', body: OAuthConfigSchema } },
});

export const getConfigz = defineOperation({
  operationId: 'getConfigz',
  method: 'get',
  path: `${CONFIG_BASE}/configs/configz`,
  tags: ['config'],
  summary: 'Which optional modules kapi serves (the console hides the others)',
  security: 'public',
  responses: { 200: { description: 'Module → served.', body: ConfigzSchema } },
});

export const listGpuKinds = defineOperation({
  operationId: 'listGpuKinds',
  method: 'get',
  path: `${CONFIG_BASE}/configs/gpu/kinds`,
  tags: ['config'],
  summary: 'The GPU resource kinds the console offers in its forms (none configured: an empty list)',
  security: 'bearer',
  responses: {
    200: { description: 'The GPU kinds.', body: GpuKindsSchema },
    401: statusResponses[401],
    503: statusResponses[503],
  },
});

export const configOperations = [getVersion, getOAuthConfig, getConfigz, listGpuKinds] as const;
