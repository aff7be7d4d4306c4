import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { plausibleTimes, type CachedTokens } from './exec-credential.js';

/**
 * Tokens cached under the kube cache directory (KUBECACHEDIR, as kubectl reads it, else ~/.kube/cache), in
 * kapi/<digest of server and user>.json: one file per server and user, readable by the owner only (0600 in a 0700
 * directory), written beside and renamed so a concurrent kubectl never reads half a file.
 */
export function cacheDirectory(env: NodeJS.ProcessEnv): string {
  return join(env.KUBECACHEDIR || join(env.HOME || homedir(), '.kube', 'cache'), 'kapi');
}

export function cacheFile(env: NodeJS.ProcessEnv, server: string, username: string): string {
  const digest = createHash('sha256').update(`${server}\n${username}`).digest('hex').slice(0, 32);
  return join(cacheDirectory(env), `${digest}.json`);
}

/**
 * The cached tokens, or undefined. The cache holds credentials, so it must be the user's alone: a directory open to
 * group or others is closed (0700) with a warning; a file open to them, not the user's own or not a plain file is
 * not used (its tokens may have been read: it is deleted, and a new login replaces it). Times that cannot be
 * believed count as expired, so the refresh token renews them.
 */
export async function readCache(
  path: string,
  warn: (message: string) => void = () => undefined,
): Promise<CachedTokens | undefined> {
  const directory = dirname(path);
  const dirStat = await lstat(directory).catch(() => undefined);
  if (dirStat?.isDirectory() && (dirStat.mode & 0o077) !== 0 && dirStat.uid === process.getuid?.()) {
    await chmod(directory, 0o700);
    warn(`${directory} was open to other users (mode ${octal(dirStat.mode)}); it is 0700 now`);
  }
  let fileStat;
  try {
    fileStat = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const ownerOnly = (fileStat.mode & 0o077) === 0 && fileStat.uid === process.getuid?.();
  if (!fileStat.isFile() || !ownerOnly) {
    await rm(path, { force: true });
    warn(
      `${path} was ${fileStat.isFile() ? `open to other users (mode ${octal(fileStat.mode)})` : 'not a plain file'}; ` +
        'its tokens are not used and it was deleted (log in again)',
    );
    return undefined;
  }
  const text = await readFile(path, 'utf8');
  try {
    const parsed = JSON.parse(text) as Partial<CachedTokens>;
    const strings = ['server', 'username', 'clientId', 'accessToken', 'refreshToken'] as const;
    if (!strings.every((key) => typeof parsed[key] === 'string')) return undefined;
    const tokens = parsed as CachedTokens;
    return plausibleTimes(tokens, Date.now()) ? tokens : { ...tokens, obtainedAt: 0, expiresAt: 0 };
  } catch {
    // a damaged cache is no cache: the next login overwrites it
    return undefined;
  }
}

export async function writeCache(path: string, tokens: CachedTokens): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  // A leftover file of that name keeps its mode through writeFile: removed first, and the mode set again.
  await rm(temporary, { force: true });
  await writeFile(temporary, `${JSON.stringify(tokens)}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

export async function deleteCache(path: string): Promise<void> {
  await rm(path, { force: true });
}
