/** Fixed paths, public: other services (kube-apiserver's OIDC authenticator among them) verify kapi's tokens here. */
export const OIDC_DISCOVERY_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks.json';
