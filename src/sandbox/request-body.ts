import type { Exchange } from './exchange.js';
import { decodeProtobufObject, ProtobufError } from './protobuf.js';
import { badRequest, unsupportedMediaType } from './status.js';

/**
 * Request bodies as kube-apiserver takes them: JSON, or protobuf for the built-in kinds kubectl's typed clients send
 * that way. Anything else is 415 with the list of accepted types.
 */
const ACCEPTED = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

export function mediaType(x: Exchange): string {
  return (x.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

/** An object body (create, update, reviews); undefined when empty. */
export async function readObjectBody(x: Exchange): Promise<unknown> {
  const type = mediaType(x);
  if (type !== '' && type !== 'application/json' && type !== PROTOBUF) throw unsupportedMediaType(type, ACCEPTED);
  const body = await x.readBody();
  if (body.length === 0) return undefined;
  if (type !== PROTOBUF) return parseJson(body);
  try {
    return decodeProtobufObject(body);
  } catch (err) {
    if (err instanceof ProtobufError) throw unsupportedMediaType(type, ['application/json', 'application/yaml']);
    throw err;
  }
}

/** A JSON body of one of the given media types (patches). */
export async function readJsonBody(x: Exchange, accepted: readonly string[]): Promise<unknown> {
  const type = mediaType(x);
  if (!accepted.includes(type)) throw unsupportedMediaType(type, accepted);
  const body = await x.readBody();
  return body.length === 0 ? undefined : parseJson(body);
}
