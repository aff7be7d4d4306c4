/**
 * A client of kapi's platform API generated from api/platform.openapi.json (openapi-typescript types, openapi-fetch
 * requests): log in with the password grant, list nodes, log out. Type-checked by `npm run typecheck`; the suite
 * runs it against a real kapi (test/apidocs/generated-client.test.ts).
 *
 *   npx openapi-typescript http://127.0.0.1:9090/api-docs/platform.json -o platform-api.d.ts
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './platform-api.js';

export type NodeList = components['schemas']['NodeList'];

export async function listNodes(
  baseUrl: string,
  login: { username: string; password: string; clientId?: string; clientSecret?: string },
  query: NonNullable<paths['/kapis/resources.kapi.io/v1alpha3/nodes']['get']['parameters']['query']> = {},
): Promise<NodeList> {
  // arrays travel comma-separated, as the document says (style: form, explode: false)
  const kapi = createClient<paths>({ baseUrl, querySerializer: { array: { style: 'form', explode: false } } });

  const token = await kapi.POST('/oauth/token', {
    body: {
      grant_type: 'password',
      username: login.username,
      password: login.password,
      client_id: login.clientId ?? 'kapi',
      client_secret: login.clientSecret ?? 'kapi',
    },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  if (!token.data) throw new Error(`login failed: ${token.error?.error}: ${token.error?.error_description}`);
  const authorization = { Authorization: `Bearer ${token.data.access_token}` };

  try {
    const nodes = await kapi.GET('/kapis/resources.kapi.io/v1alpha3/nodes', {
      params: { query },
      headers: authorization,
    });
    if (!nodes.data) throw new Error(`listing nodes failed: ${nodes.response.status} ${nodes.error?.message}`);
    return nodes.data;
  } finally {
    await kapi.POST('/oauth/logout', { headers: authorization });
  }
}
