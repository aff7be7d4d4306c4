/** Small HTTP helpers for talking to kapi the way a user's script would. */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

export async function login(
  baseUrl: string,
  username: string,
  password: string,
  client = { id: 'kapi', secret: 'kapi' },
): Promise<TokenPair> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      username,
      password,
      client_id: client.id,
      client_secret: client.secret,
    }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as TokenPair;
}

export async function getJson<T = unknown>(url: string, token?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** The refresh grant with the default client; the raw answer, for its status and error. */
export function refreshGrant(baseUrl: string, refreshToken: string): Promise<Response> {
  return fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: 'kapi',
      client_secret: 'kapi',
    }),
  });
}
