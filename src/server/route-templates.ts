import { REMOVED_ROUTES } from '../apis/logging/v1alpha2/removed-routes.js';
import { platformOperations } from '../apidocs/documents.js';
import { API_DOCS_PATHS } from '../apidocs/routes.js';
import { HEALTH_PATHS } from './health.js';

/**
 * Every route kapi serves itself, as templates: the `route` label of its request metrics (forwarded paths are
 * labelled by resource instead). A path none of them matches is counted as `other`.
 */
export function kapiRouteTemplates(): string[] {
  return [
    ...platformOperations.map((operation) => operation.path),
    ...REMOVED_ROUTES,
    ...HEALTH_PATHS,
    API_DOCS_PATHS.page,
    API_DOCS_PATHS.platform,
    API_DOCS_PATHS.crds,
    '/api-docs/swagger-initializer.js',
    '/api-docs/swagger-ui/{file}',
  ];
}
