import { readFile } from 'node:fs/promises';

/**
 * Bearer credentials from a token file, re-read on every call: projected service-account tokens rotate (hourly by
 * default) and kubelet rewrites the file. The first read happens here, so a missing token fails at start-up; later a
 * failed or empty re-read keeps the last good token, as client-go's cached file token source does, since the file
 * is replaced atomically and the old token stays valid for a while.
 */
export async function tokenFileCredentials(
  file: string,
  label: string,
): Promise<() => Promise<Record<string, string>>> {
  let last = await readToken(file, label);
  return async () => {
    last = await readToken(file, label).catch(() => last);
    return { Authorization: `Bearer ${last}` };
  };
}

async function readToken(file: string, label: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    // the fs message names the path and the reason, never the content
    throw new Error(`${label} ${file} could not be read: ${(error as Error).message}`, { cause: error });
  }
  const token = text.trim();
  if (!token) throw new Error(`${label} ${file} is empty`);
  return token;
}
