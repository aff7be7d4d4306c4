import { Router } from 'express';
import type { ReadinessCheck } from '../kube/caches.js';

export const HEALTH_PATHS = ['/healthz', '/livez', '/readyz'] as const;

/**
 * `/healthz` and `/livez`: the process answers. `/readyz`: every readiness check passes (caches synced and current,
 * configuration and signing key loaded). `?verbose` lists each check, as kube-apiserver does.
 */
export function healthRoutes(checks: readonly ReadinessCheck[]): Router {
  const router = Router();
  const alive = (_req: unknown, res: import('express').Response) => {
    res.type('text/plain').send('ok');
  };
  router.get('/healthz', alive);
  router.get('/livez', alive);
  router.get('/readyz', (req, res) => {
    const results = checks.map((check) => ({ name: check.name, reason: check.notReadyReason() }));
    const ready = results.every((r) => r.reason === undefined);
    res.status(ready ? 200 : 503).type('text/plain');
    if (req.query.verbose === undefined) {
      res.send(ready ? 'ok' : 'not ready');
      return;
    }
    const lines = results.map((r) => (r.reason === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.reason}`));
    res.send(`${lines.join('\n')}\nreadyz check ${ready ? 'passed' : 'failed'}\n`);
  });
  return router;
}
