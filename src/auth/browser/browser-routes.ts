import { Router } from 'express';
import { mountOperation } from '../../openapi/operation.js';
import type { LoginPageDeps } from './login-endpoint.js';
import { loginPageEndpoints, pageFormBody } from './login-endpoint.js';
import { authorizeEndpoint } from './authorize-endpoint.js';
import {
  authorize,
  authorizeWithPost,
  showLoginPage,
  startUpstreamLogin,
  submitLoginForm,
  upstreamCallback,
} from './operations.js';
import { upstreamButtons, upstreamCallbackEndpoint, upstreamStartEndpoint } from './upstream-sign-in.js';

export type BrowserSignInDeps = Omit<LoginPageDeps, 'providerButtons'>;

/** The browser sign-in endpoints, to mount in the /oauth router (whose base is /oauth). */
export function browserRoutes(deps: BrowserSignInDeps): Router {
  const router = Router();
  const authorizeHandler = authorizeEndpoint(deps);
  mountOperation(router, '/oauth', authorize, authorizeHandler);
  mountOperation(router, '/oauth', authorizeWithPost, pageFormBody, authorizeHandler);
  const login = loginPageEndpoints({ ...deps, providerButtons: upstreamButtons(deps) });
  mountOperation(router, '/oauth', showLoginPage, login.show);
  mountOperation(router, '/oauth', submitLoginForm, ...login.submit);
  mountOperation(router, '/oauth', startUpstreamLogin, upstreamStartEndpoint(deps));
  mountOperation(router, '/oauth', upstreamCallback, upstreamCallbackEndpoint(deps));
  return router;
}
