import { join } from 'node:path';
import { loadServingCertificate, type ServingCertificate } from '../../src/server/tls.js';

/** A serving certificate and its CA, generated as kapi does with no files or Secret given; the CA written to `dir`. */
export function generatedCertificate(dir: string, caFileName = 'ca.crt'): Promise<ServingCertificate> {
  return loadServingCertificate({
    certFile: undefined,
    keyFile: undefined,
    secret: undefined,
    caOut: join(dir, caFileName),
    hosts: [],
  });
}
