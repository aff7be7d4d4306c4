import { Router } from 'express';
import { mountOperation } from '../../openapi/operation.js';
import { BadRequestError } from '../../server/errors.js';
import { withCaller } from '../caller.js';
import { openPodTerminal } from './operations.js';
import type { PodTerminals, TerminalRequest } from './terminal.js';

/**
 * The terminal's route asked without an upgrade: the console probes it (a 404 sends it to an older path), so the
 * same checks as the upgrade's, then 400.
 */
export function terminalRoutes(terminals: PodTerminals): Router {
  const router = Router();
  mountOperation(
    router,
    '',
    openPodTerminal,
    withCaller(async (caller, req) => {
      const { container, shell } = req.query as Record<string, unknown>;
      const request: TerminalRequest = {
        namespace: String(req.params.namespace),
        pod: String(req.params.pod),
        ...(typeof container === 'string' && container && { container }),
        ...(typeof shell === 'string' && shell && { shell }),
      };
      await terminals.check(caller, request);
      throw new BadRequestError('a terminal is opened as a WebSocket (Upgrade: websocket)');
    }),
  );
  return router;
}
