#!/usr/bin/env node
/**
 * kubectl-kapi: a client-go credential plugin for kapi (`kubectl kapi …` once it is on the PATH).
 *
 *   kubectl kapi login --server https://<kapi>:9443 [--certificate-authority ca.crt] [--username U]
 *   kubectl get nodes            # kubectl runs `kubectl-kapi token …` and gets a fresh access token
 *   kubectl kapi logout          # revokes the login session and deletes the cached tokens
 *
 * Light on purpose: node's own modules and `yaml`, nothing of the server (kubectl runs it for every command).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { execCredential, expiresAtOf, needsRefresh, parseExecInfo, type CachedTokens } from './exec-credential.js';
import { kubeconfigPath, loginOf, namesFor, readKubeconfig, withLogin, writeKubeconfig } from './kubeconfig-file.js';
import {
  OAuthRequestError,
  passwordGrant,
  refreshGrant,
  revoke,
  type OAuthTarget,
  type TokenResponse,
} from './oauth-client.js';
import { canPrompt, promptLine, promptSecret, readStdin } from './terminal.js';
import { browserLogin, systemBrowser } from './browser-login.js';
import { cacheFile, deleteCache, readCache, writeCache } from './token-cache.js';
import { StatusError, changePassword } from './account-client.js';

const USAGE = `kubectl kapi: log in to kapi-apiserver with kubectl

Commands:
  login   --server https://<kapi>:9443 [--certificate-authority FILE] [--username NAME] [--password-stdin]
          [--client-id ID] [--kubeconfig FILE] [--context NAME]
          Logs in (password from KAPI_PASSWORD, stdin with --password-stdin, or the terminal), caches the tokens and
          writes a kubeconfig context whose user runs this plugin; that context becomes current.
  login   --browser --server https://<kapi>:9443 [--certificate-authority FILE] [--client-id ID] [...]
          Signs in in your browser instead (kapi's login page, or your organization's single sign-on): the code
          comes back to 127.0.0.1 on a random port. Client "kubectl" (public) unless --client-id; $BROWSER, when
          set, is the command that opens the address.
  token   --server URL --username NAME [--client-id ID]
          Run by kubectl (exec credential plugin): prints a valid access token, refreshing it when it is about to
          expire; asks for the password only when the refresh fails and kubectl allows a prompt.
  logout  [--context NAME] [--kubeconfig FILE] | --server URL --username NAME [--certificate-authority FILE]
          Revokes the login session on the server and deletes the cached tokens.
  passwd  [--user NAME] [--context NAME] [--kubeconfig FILE]
          Changes your password (asks for the current one and the new one twice, without echo), or, as an
          administrator, NAME's; your other login sessions end. Scripts: KAPI_PASSWORD (current) and
          KAPI_NEW_PASSWORD. A directory user changes the password in the directory.

Environment: KAPI_USERNAME, KAPI_PASSWORD, KAPI_NEW_PASSWORD (scripts), KAPI_CLIENT_SECRET (default "kapi"), KUBECONFIG, KUBECACHEDIR.
Tokens are cached in $KUBECACHEDIR/kapi or ~/.kube/cache/kapi (mode 0600), one file per server and user.`;

const DEFAULT_CLIENT = 'kapi';
/** The public client the chart registers for browser sign-in from the terminal. */
const BROWSER_CLIENT = 'kubectl';

class UsageError extends Error {}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'login':
      return login(rest, env);
    case 'token':
    case 'get-token':
      return token(rest, env);
    case 'logout':
      return logout(rest, env);
    case 'passwd':
      return passwd(rest, env);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function login(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      server: { type: 'string' },
      'certificate-authority': { type: 'string' },
      username: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      'client-id': { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      browser: { type: 'boolean' },
    },
  });
  const server = serverUrl(values.server);
  const caPem = await caFile(values['certificate-authority']);
  const browser = values.browser === true;
  if (browser && (values.username || values['password-stdin'])) {
    throw new UsageError('--browser signs in in the browser: it takes no --username or --password-stdin');
  }
  const target = oauthTarget(server, caPem, values['client-id'] ?? (browser ? BROWSER_CLIENT : undefined), env);
  let username: string;
  let tokens: TokenResponse;
  if (browser) {
    ({ username, tokens } = await signInWithBrowser(target, env));
  } else {
    if (values['password-stdin'] && !(values.username ?? env.KAPI_USERNAME)) {
      throw new UsageError('--password-stdin needs --username (or KAPI_USERNAME)');
    }
    username = values.username ?? env.KAPI_USERNAME ?? (await ask(() => promptLine('Username: '), 'a username'));
    const password = values['password-stdin']
      ? await readStdin()
      : (env.KAPI_PASSWORD ?? (await ask(() => promptSecret(`Password for ${username}: `), 'a password')));
    tokens = await passwordGrant(target, username, password);
  }
  await writeCache(cacheFile(env, server, username), cached(target, username, tokens));

  const path = kubeconfigPath(values.kubeconfig, env);
  const contextName = values.context ?? namesFor(server, username).context;
  const secret = target.clientSecret === DEFAULT_CLIENT ? undefined : target.clientSecret;
  const config = withLogin(await readKubeconfig(path), {
    server,
    caPem,
    username,
    clientId: target.clientId,
    clientSecret: secret,
    contextName,
    browser,
  });
  await writeKubeconfig(path, config);
  process.stdout.write(
    `Logged in to ${server} as ${username}. Context "${contextName}" in ${path} is current: try kubectl get nodes.\n`,
  );
  return 0;
}

async function token(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      server: { type: 'string' },
      username: { type: 'string' },
      'client-id': { type: 'string' },
      'certificate-authority': { type: 'string' },
      browser: { type: 'boolean' },
    },
  });
  const info = parseExecInfo(env.KUBERNETES_EXEC_INFO);
  const server = serverUrl(values.server ?? info?.server);
  if (!values.username) throw new UsageError('token needs --username (kubectl kapi login writes it)');
  const username = values.username;
  const caPem = info?.caPem ?? (await caFile(values['certificate-authority']));
  const target = oauthTarget(server, caPem, values['client-id'], env);
  const path = cacheFile(env, server, username);
  const now = Date.now();

  const current = await readCache(path, warn);
  const usable = current && current.clientId === target.clientId ? current : undefined;
  if (usable && !needsRefresh(usable, now)) return printCredential(usable);
  if (usable) {
    try {
      const tokens = await refreshGrant(target, usable.refreshToken);
      const next = cached(target, username, tokens);
      await writeCache(path, next);
      return printCredential(next);
    } catch (err) {
      const ended = err instanceof OAuthRequestError && (err.error === 'invalid_grant' || err.status === 401);
      // the server cannot be asked right now: a token that has not expired yet is still worth a try
      if (!ended && now < usable.expiresAt) return printCredential(usable);
      if (!ended) throw err;
    }
  }

  // No usable refresh token: a new login, if kubectl allows a prompt or a script gave the password.
  const interactive = info ? info.interactive : canPrompt();
  if (values.browser) {
    if (!interactive) {
      process.stderr.write(
        `kubectl-kapi: the kapi login of ${username} at ${server} has ended; sign in again:\n` +
          `  kubectl kapi login --browser --server ${server}\n`,
      );
      return 1;
    }
    const signedIn = await signInWithBrowser(target, env);
    if (signedIn.username !== username) {
      throw new Error(
        `you signed in as ${signedIn.username}, but this context is ${username}'s: ` +
          `run kubectl kapi login --browser --server ${server} to switch`,
      );
    }
    const next = cached(target, username, signedIn.tokens);
    await writeCache(path, next);
    return printCredential(next);
  }
  const fromEnv = env.KAPI_PASSWORD !== undefined && (env.KAPI_USERNAME ?? username) === username;
  if (!fromEnv && !(interactive && canPrompt())) {
    process.stderr.write(
      `kubectl-kapi: the kapi login of ${username} at ${server} has ended; log in again:\n` +
        `  kubectl kapi login --server ${server} --username ${username}\n`,
    );
    return 1;
  }
  const password = fromEnv ? env.KAPI_PASSWORD! : await promptSecret(`Password for ${username} at ${server}: `);
  const tokens = await passwordGrant(target, username, password);
  const next = cached(target, username, tokens);
  await writeCache(path, next);
  return printCredential(next);
}

async function logout(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      context: { type: 'string' },
      kubeconfig: { type: 'string' },
      server: { type: 'string' },
      username: { type: 'string' },
      'client-id': { type: 'string' },
      'certificate-authority': { type: 'string' },
    },
  });
  const login =
    values.server && values.username
      ? {
          server: serverUrl(values.server),
          username: values.username,
          clientId: values['client-id'] ?? DEFAULT_CLIENT,
          caPem: await caFile(values['certificate-authority']),
        }
      : loginOf(await readKubeconfig(kubeconfigPath(values.kubeconfig, env)), values.context);
  const path = cacheFile(env, login.server, login.username);
  const current = await readCache(path, warn);
  let code = 0;
  if (current) {
    try {
      await revoke(oauthTarget(login.server, login.caPem, login.clientId, env), current.refreshToken);
    } catch (err) {
      process.stderr.write(
        `kubectl-kapi: the server did not confirm the logout (${describe(err)}); ` +
          `the session ends by itself when its refresh token expires\n`,
      );
      code = 1;
    }
  }
  await deleteCache(path);
  process.stdout.write(`Logged out ${login.username} at ${login.server}; cached tokens deleted.\n`);
  return code;
}

async function passwd(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      user: { type: 'string' },
      context: { type: 'string' },
      kubeconfig: { type: 'string' },
    },
  });
  const login = loginOf(await readKubeconfig(kubeconfigPath(values.kubeconfig, env)), values.context);
  const target = oauthTarget(login.server, login.caPem, login.clientId, env);
  const accessToken = await freshAccessToken(target, login.username, env);
  const name = values.user ?? login.username;
  const own = name === login.username;
  const prompt = (question: string) => ask(() => promptSecret(question), 'a password');
  const currentPassword = own ? (env.KAPI_PASSWORD ?? (await prompt(`Current password for ${name}: `))) : undefined;
  let password = env.KAPI_NEW_PASSWORD;
  if (password === undefined) {
    password = await prompt(`New password for ${name}: `);
    if ((await prompt('Retype the new password: ')) !== password)
      throw new Error('the new passwords differ; nothing changed');
  }
  try {
    const ended = await changePassword({ server: login.server, caPem: login.caPem, accessToken }, name, {
      password,
      ...(currentPassword !== undefined ? { currentPassword } : {}),
    });
    process.stdout.write(
      `Password of ${name} changed at ${login.server}; ${ended} other login session${ended === 1 ? '' : 's'} ended.\n`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof StatusError)) throw err;
    process.stderr.write(`kubectl-kapi: the password was not changed: ${err.message}\n`);
    return 1;
  }
}

/** The cached access token of a login, refreshed when it is about to expire; a login is needed when there is none. */
async function freshAccessToken(target: OAuthTarget, username: string, env: NodeJS.ProcessEnv): Promise<string> {
  const path = cacheFile(env, target.server, username);
  const current = await readCache(path, warn);
  if (!current || current.clientId !== target.clientId) {
    throw new Error(`not logged in as ${username} at ${target.server}: run kubectl kapi login first`);
  }
  if (!needsRefresh(current, Date.now())) return current.accessToken;
  const next = cached(target, username, await refreshGrant(target, current.refreshToken));
  await writeCache(path, next);
  return next.accessToken;
}

function printCredential(tokens: CachedTokens): number {
  process.stdout.write(`${execCredential(tokens.accessToken, tokens.expiresAt)}\n`);
  return 0;
}

function cached(target: OAuthTarget, username: string, tokens: TokenResponse): CachedTokens {
  const obtainedAt = Date.now();
  return {
    server: target.server,
    username,
    clientId: target.clientId,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    obtainedAt,
    // a lifetime that makes no sense (1e300, negative) is taken as expired: the next use refreshes
    expiresAt: expiresAtOf(obtainedAt, tokens.expires_in),
  };
}

function oauthTarget(
  server: string,
  caPem: string | undefined,
  clientId: string | undefined,
  env: NodeJS.ProcessEnv,
): OAuthTarget {
  return {
    server,
    caPem,
    clientId: clientId ?? DEFAULT_CLIENT,
    // the default client's secret is "kapi"; another client's is in KAPI_CLIENT_SECRET, or it is public (none)
    clientSecret:
      env.KAPI_CLIENT_SECRET ?? ((clientId ?? DEFAULT_CLIENT) === DEFAULT_CLIENT ? DEFAULT_CLIENT : undefined),
  };
}

/** The browser sign-in, talking to the user on stderr (stdout is kubectl's). */
function signInWithBrowser(target: OAuthTarget, env: NodeJS.ProcessEnv) {
  return browserLogin({
    target,
    openBrowser: systemBrowser(env),
    tell: (line) => process.stderr.write(`${line}\n`),
  });
}

/** https only: a password or a token never crosses the network in clear text (kubectl refuses that too). */
function serverUrl(text: string | undefined): string {
  if (!text) throw new UsageError('--server https://<kapi>:9443 is required');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--server must be an https URL, not "${text}"`);
  }
  if (url.protocol !== 'https:') throw new UsageError(`--server must be an https URL, not "${text}"`);
  return text.replace(/\/+$/, '');
}

async function caFile(path: string | undefined): Promise<string | undefined> {
  if (!path) return undefined;
  const pem = await readFile(path, 'utf8').catch((err: unknown) => {
    throw new UsageError(`cannot read --certificate-authority ${path}: ${describe(err)}`);
  });
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`${path} holds no PEM certificate`);
  return pem;
}

async function ask(prompt: () => Promise<string>, what: string): Promise<string> {
  if (!canPrompt()) throw new UsageError(`${what} is needed: no terminal to ask on (set KAPI_USERNAME/KAPI_PASSWORD)`);
  return prompt();
}

function warn(message: string): void {
  process.stderr.write(`kubectl-kapi: ${message}\n`);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`kubectl-kapi: ${describe(err)}${usage ? '\nRun "kubectl kapi help" for usage.' : ''}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
