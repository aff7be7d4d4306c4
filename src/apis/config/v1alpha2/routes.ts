import { Router } from 'express';
import type { AuthSettings } from '../../../config/cluster-configuration.js';
import { mountOperation } from '../../../openapi/operation.js';
import { configz, oauthConfig, versionInfo, type KubernetesVersion } from './config-values.js';
import { getConfigz, getOAuthConfig, getVersion, listGpuKinds } from './operations.js';

export interface ConfigRouteDeps {
  /** kapi-apiserver's own version. */
  version: string;
  kubernetesVersion: () => Promise<KubernetesVersion | undefined>;
  settings: () => Pick<AuthSettings, 'identityProviders' | 'monitoring'>;
}

/** The public ones (mounted before authentication): /kapis/version, configs/oauth, configs/configz. */
export function publicConfigRoutes(deps: ConfigRouteDeps): Router {
  const router = Router();
  mountOperation(router, '', getVersion, (_req, res, next) => {
    deps.kubernetesVersion().then((kubernetes) => res.json(versionInfo(deps.version, kubernetes)), next);
  });
  mountOperation(router, '', getOAuthConfig, (_req, res) => {
    res.json(oauthConfig(deps.settings().identityProviders));
  });
  mountOperation(router, '', getConfigz, (_req, res) => {
    res.json(configz({ monitoring: deps.settings().monitoring !== undefined }));
  });
  return router;
}

/** The rest, for authenticated callers: configs/gpu/kinds (kapi configures no GPU kinds). */
export function configRoutes(): Router {
  const router = Router();
  mountOperation(router, '', listGpuKinds, (_req, res) => {
    res.json([]);
  });
  return router;
}
