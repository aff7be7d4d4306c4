import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile, chmod } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { CachedTokens } from './exec-credential.js';

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

export async function readCache(path: string): Promise<CachedTokens | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<CachedTokens>;
    const strings = ['server', 'username', 'clientId', 'accessToken', 'refreshToken'] as const;
    if (!strings.every((key) => typeof parsed[key] === 'string')) return undefined;
    if (typeof parsed.obtainedAt !== 'number' || typeof parsed.expiresAt !== 'number') return undefined;
    return parsed as CachedTokens;
  } catch {
    // a damaged cache is no cache: the next login overwrites it
    return undefined;
  }
}

export async function writeCache(path: string, tokens: CachedTokens): Promise<void> {
  const directory = join(path, '..');
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(tokens)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

export async function deleteCache(path: string): Promise<void> {
  await rm(path, { force: true });
}
