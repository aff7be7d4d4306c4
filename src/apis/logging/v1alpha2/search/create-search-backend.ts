import { readFile } from 'node:fs/promises';
import type { LoggingOptions } from '../../../../config/options.js';
import type { KubeClient } from '../../../../kube/client.js';
import type { Logger } from '../../../../observability/logger.js';
import { ServiceUnavailableError } from '../../../../server/errors.js';
import { searchFields } from './fields.js';
import { SearchBackend, type SearchCredentials } from './search-backend.js';

interface SecretObject {
  data?: Record<string, string>;
}

/**
 * The OpenSearch backend from the options: credentials (`username`, `password`, optionally `ca.crt`) from a Secret,
 * read when first needed and again after the store refuses them, and a CA file when one is given.
 */
export function createSearchBackend(deps: {
  options: LoggingOptions;
  client: KubeClient;
  logger: Logger;
}): SearchBackend {
  const { options, client, logger } = deps;
  if (!options.searchUrl) throw new Error('the opensearch log backend needs a URL');
  const credentials = async (): Promise<SearchCredentials> => {
    const found: SearchCredentials = {};
    if (options.searchCaFile) found.ca = await readFile(options.searchCaFile, 'utf8');
    const ref = options.searchSecret;
    if (!ref) return found;
    let secret: SecretObject;
    try {
      secret = await client.request<SecretObject>({
        path: `/api/v1/namespaces/${ref.namespace}/secrets/${ref.name}`,
        timeoutMs: 10_000,
      });
    } catch (error) {
      logger.error('the log store credentials could not be read', {
        secret: `${ref.namespace}/${ref.name}`,
        error: error instanceof Error ? error.message : String(error),
      });
      throw new ServiceUnavailableError(
        `the log store credentials (Secret ${ref.namespace}/${ref.name}) could not be read`,
      );
    }
    const decode = (key: string) => {
      const value = secret.data?.[key];
      return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
    };
    const username = decode('username');
    const password = decode('password');
    const ca = decode('ca.crt');
    return {
      ...found,
      ...(username !== undefined && { username }),
      ...(password !== undefined && { password }),
      ...(ca !== undefined && { ca }),
    };
  };
  return new SearchBackend({
    url: options.searchUrl,
    indexPrefix: options.searchIndex,
    fields: searchFields(options.searchFields),
    credentials,
  });
}
