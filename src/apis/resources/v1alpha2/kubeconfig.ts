import { stringify } from 'yaml';
// the kubeconfig `kubectl kapi login` writes, built by the plugin's own pure function: one shape for both
import { withLogin } from '../../../cli/kubectl-kapi/kubeconfig-file.js';

/** How the user signs in when kubectl first needs a token: kapi's password grant, or the browser (SSO users). */
export type SignIn = 'password' | 'browser';

export interface UserKubeconfigRequest {
  /** kapi's HTTPS address as kubectl reaches it. */
  server: string;
  /** The CA of kapi's serving certificate, when kapi generated it (else the system's trust store verifies it). */
  caPem?: string;
  username: string;
  signIn: SignIn;
}

/**
 * The console's kubeconfig for a user (pure): a context reaching the cluster through kapi whose user is the
 * `kubectl-kapi` credential plugin, which signs the user in when kubectl first needs a token and refreshes it after,
 * as `kubectl kapi login` sets up. It carries no credential: nothing long-lived is minted, and whoever holds the file
 * still signs in as the user.
 */
export function userKubeconfig(request: UserKubeconfigRequest): string {
  const browser = request.signIn === 'browser';
  const config = withLogin(
    {},
    {
      server: request.server,
      ...(request.caPem && { caPem: request.caPem }),
      username: request.username,
      clientId: browser ? 'kubectl' : 'kapi',
      contextName: `${request.username}@kapi`,
      ...(browser && { browser }),
    },
  );
  const how = browser
    ? 'kubectl opens your browser to sign in the first time'
    : 'kubectl asks for your password the first time (KAPI_PASSWORD in scripts)';
  return (
    `# ${request.username} at ${request.server}, through kapi. Needs the kubectl-kapi credential plugin on the PATH:\n` +
    `# ${how}, then keeps the token fresh. The file holds no credential.\n` +
    stringify(config)
  );
}

/**
 * kapi's HTTPS address for kubectl (pure): the published one (`--issuer-url`) when set; otherwise the host the request
 * named, on the HTTPS port (a port-forward or the Service's name). Undefined when kapi serves no HTTPS: kubectl never
 * sends a token over plain HTTP.
 */
export function kubectlServer(published: string | undefined, requestHost: string | undefined, tlsPort?: number) {
  if (published) return published;
  if (tlsPort === undefined || !requestHost) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${requestHost}`).hostname;
  } catch {
    return undefined;
  }
  return `https://${hostname}:${tlsPort}`;
}
