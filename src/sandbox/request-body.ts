import type { Exchange } from './exchange.js';
import { decodeProtobufObject, ProtobufError } from './protobuf.js';
import { typeMetaError, unrecognizedObjectMessage } from './decode-errors.js';
import { badRequest, unsupportedMediaType, unsupportedPatchType } from './status.js';

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

/**
 * An object body (create, update, reviews). With the endpoint's `kind`, a body kube could not decode (empty, not
 * JSON, not an object) is its 400 naming that kind; without one, an empty body is undefined.
 */
export async function readObjectBody(x: Exchange, kind?: string): Promise<unknown> {
  const type = mediaType(x);
  if (type !== '' && type !== 'application/json' && type !== PROTOBUF) throw unsupportedMediaType(ACCEPTED);
  const body = await x.readBody();
  if (type !== PROTOBUF) {
    if (kind) {
      const why = typeMetaError(body);
      if (why) throw badRequest(unrecognizedObjectMessage(kind, why, body));
    }
    return body.length === 0 ? undefined : parseJson(body);
  }
  if (body.length === 0) return undefined;
  try {
    return decodeProtobufObject(body);
  } catch (err) {
    if (err instanceof ProtobufError) throw unsupportedMediaType(['application/json', 'application/yaml']);
    throw err;
  }
}

/** A JSON body of one of the given patch types; any other Content-Type is kube's bare 415. */
export async function readJsonBody(x: Exchange, accepted: readonly string[]): Promise<unknown> {
  const type = mediaType(x);
  if (!accepted.includes(type)) throw unsupportedPatchType();
  const body = await x.readBody();
  return body.length === 0 ? undefined : parseJson(body);
}
