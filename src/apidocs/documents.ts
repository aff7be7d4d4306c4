import { componentOperations } from '../apis/resources/v1alpha2/operations.js';
import { terminalOperations } from '../apis/terminal/operations.js';
import { iamOperations } from '../apis/iam/v1alpha2/operations.js';
import { memberOperations } from '../apis/iam/v1alpha2/member-operations.js';
import { departmentOperations } from '../apis/iam/v1alpha2/department-operations.js';
import { tenantOperations } from '../apis/tenant/operations.js';
import { workspaceQuotaOperations } from '../apis/tenant/quota-operations.js';
import { eventOperations } from '../apis/tenant/events/event-operations.js';
import { configOperations } from '../apis/config/v1alpha2/operations.js';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { loggingOperations } from '../apis/logging/v1alpha2/operations.js';
import { monitoringOperations } from '../apis/monitoring/v1alpha3/operations.js';
import { imageOperations, nodeOperations } from '../apis/resources/v1alpha3/operations.js';
import { listingOperations } from '../apis/resources/v1alpha3/listing/listing-operations.js';
import { oauthOperations } from '../auth/oauth/operations.js';
import { accountOperations } from '../auth/account/operations.js';
import { browserOperations } from '../auth/browser/operations.js';
import { discoveryOperations } from '../auth/tokens/discovery-operations.js';
import { buildCrdDocument, type CustomResourceDefinition } from '../openapi/crd-document.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import type { OperationDefinition } from '../openapi/operation.js';

/**
 * kapi's two API documents: the platform APIs (/oauth, /kapis), generated from the operations the routes mount,
 * and the custom-resource APIs, generated from crds/*.yaml. `api/` holds the committed copies (`make api-docs`);
 * the server serves the same documents, built in-process.
 */
export const PLATFORM_DOCUMENT_FILE = 'api/platform.openapi.json';
export const CRD_DOCUMENT_FILE = 'api/crds.openapi.json';

/** Every operation of kapi's own API, in document order. */
export const platformOperations: readonly OperationDefinition[] = [
  ...oauthOperations,
  ...browserOperations,
  ...discoveryOperations,
  ...nodeOperations,
  ...imageOperations,
  ...listingOperations,
  ...loggingOperations,
  ...accountOperations,
  ...configOperations,
  ...iamOperations,
  ...memberOperations,
  ...departmentOperations,
  ...tenantOperations,
  ...workspaceQuotaOperations,
  ...eventOperations,
  ...componentOperations,
  ...terminalOperations,
  ...monitoringOperations,
];

/** The directory holding package.json (the repository, or /app in the image): api/ and crds/ are beside it. */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The version in package.json (what `--version` prints and the documents carry). */
export function packageVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

export function platformDocument(root = packageRoot()): Record<string, unknown> {
  return buildOpenApiDocument(
    {
      title: 'kapi platform API',
      version: packageVersion(root),
      description:
        'The APIs only kapi provides: OAuth2 tokens and sign-in from a browser (/oauth), the published token keys ' +
        'and OpenID metadata ' +
        '(/.well-known) and the platform APIs (/kapis). Errors are RFC 6749 ' +
        'JSON under /oauth and a Kubernetes Status elsewhere. Generated from the route definitions; the ' +
        'Kubernetes APIs kapi forwards (/api, /apis) are described by the cluster itself (/openapi/v3).',
    },
    platformOperations,
  );
}

export function crdDocument(root = packageRoot()): Record<string, unknown> {
  const directory = join(root, 'crds');
  const crds = readdirSync(directory)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => parseYaml(readFileSync(join(directory, file), 'utf8')) as CustomResourceDefinition);
  return buildCrdDocument(
    {
      title: 'kapi custom resources',
      version: packageVersion(root),
      description:
        'The custom-resource APIs kapi defines (ClusterConfiguration, User, LoginSession), served by ' +
        'kube-apiserver and forwarded by kapi under /apis. Generated from crds/*.yaml the way kube-apiserver ' +
        'publishes CRD schemas.',
    },
    crds,
  );
}

/** The bytes of a committed document: two-space JSON and a final newline. */
export function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
