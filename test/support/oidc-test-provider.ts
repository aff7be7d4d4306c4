/**
 * A real, certified OpenID provider (npm `oidc-provider`) in this process, on loopback over HTTPS with a CA of its
 * own: the upstream identity provider of the browser sign-in tests. Its login page is a plain form checking a
 * password per account (so a wrong upstream password fails as at Keycloak); consent is granted for registered clients
 * (first-party, as an organization configures its own single sign-on). Accounts carry `groups` and an e-mail.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { generate } from 'selfsigned';

export interface UpstreamAccount {
  password: string;
  email?: string;
  emailVerified?: boolean;
  preferredUsername?: string;
  groups?: string[];
}

export interface OidcTestProvider {
  issuer: string;
  /** PEM of the CA that signed the provider's certificate (what kapi's caSecretRef holds). */
  caPem: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, UpstreamAccount>;
  /** Logins tried on its page, in order. */
  logins: string[];
  close(): Promise<void>;
}

export async function startOidcTestProvider(options: {
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
}): Promise<OidcTestProvider> {
  const { ca, serving } = await loopbackCertificate('oidc-test');
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer({ key: serving.private, cert: serving.cert }, (req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as { port: number }).port}`;

  const clientId = options.clientId ?? 'kapi';
  const clientSecret = options.clientSecret ?? 'kapi-at-the-provider-s3cret';
  const accounts = new Map<string, UpstreamAccount>();
  const logins: string[] = [];
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'upstream-1', alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [signingKey] },
    adapter: MemoryAdapter,
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    cookies: { keys: ['oidc-test-provider-cookie-key'] },
    pkce: { required: () => true },
    scopes: ['openid', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    // every claim in the ID token (no user info round trip), as most providers can be configured to do
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            preferred_username: account.preferredUsername ?? id,
            name: id,
            ...(account.email ? { email: account.email, email_verified: account.emailVerified ?? true } : {}),
            groups: account.groups ?? [],
          };
        },
      };
    },
    // first-party clients: no consent screen
    async loadExistingGrant(ctx: {
      oidc: {
        provider: { Grant: new (init: Record<string, unknown>) => GrantLike } & {
          Grant: { find(id: string): Promise<GrantLike> };
        };
        client: { clientId: string };
        session: { accountId: string; grantIdFor(clientId: string): string | undefined };
        result?: { consent?: { grantId?: string } };
      };
    }) {
      const existing = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid profile email groups');
      await grant.save();
      return grant;
    },
    renderError(ctx: { type: string; body: string }, out: { error: string }) {
      ctx.type = 'html';
      ctx.body = `<!doctype html><title>error</title><h1>${escape(out.error)}</h1>`;
    },
  });
  const oidc = provider.callback();

  handler = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname.startsWith('/interaction/')) {
      interaction(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)));
      return;
    }
    oidc(req, res);
  };

  /** The provider's own login page: a login and a password, checked against `accounts`. */
  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET') {
      page(res, 200, details.uid, '');
      return;
    }
    const form = new URLSearchParams(await body(req));
    const login = form.get('login') ?? '';
    logins.push(login);
    const account = accounts.get(login);
    if (!account || account.password !== form.get('password')) {
      page(res, 401, details.uid, 'Invalid login or password.');
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
  }

  return {
    issuer,
    caPem: ca.cert,
    clientId,
    clientSecret,
    accounts,
    logins,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A CA of its own and a certificate for 127.0.0.1 signed by it (a test server on loopback HTTPS). */
export async function loopbackCertificate(name: string) {
  const ca = await generate([{ name: 'commonName', value: `${name}-ca` }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const serving = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { ca, serving };
}

/** oidc-provider's storage, in memory (its own dev adapter warns on every start). */
class MemoryAdapter {
  private static readonly store = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();

  constructor(private readonly model: string) {}

  private key(id: string): string {
    return `${this.model}:${id}`;
  }

  async upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void> {
    MemoryAdapter.store.set(this.key(id), { payload, expiresAt: Date.now() + expiresIn * 1000 });
  }

  async find(id: string): Promise<Record<string, unknown> | undefined> {
    const entry = MemoryAdapter.store.get(this.key(id));
    return entry && entry.expiresAt > Date.now() ? entry.payload : undefined;
  }

  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    return [...MemoryAdapter.store].find(
      ([key, entry]) => key.startsWith(`${this.model}:`) && entry.payload.uid === uid,
    )?.[1].payload;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const entry = MemoryAdapter.store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    MemoryAdapter.store.delete(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [key, entry] of MemoryAdapter.store)
      if (entry.payload.grantId === grantId) MemoryAdapter.store.delete(key);
  }
}

interface GrantLike {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}

function page(res: ServerResponse, status: number, uid: string, error: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<title>Upstream sign-in</title>
<h1>Upstream identity provider</h1>
${error ? `<p role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}">
<label>Upstream login <input name="login" autocomplete="username"></label>
<label>Upstream password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in upstream</button>
</form>`);
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function escape(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}
