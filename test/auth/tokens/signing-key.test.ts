import { MIN_KEY_BYTES, SecretSigningKey, keyFromSecret } from '../../../src/auth/tokens/signing-key.js';
import { capturingLogger } from '../fakes.js';
import { kubeError, stubClient } from '../stub-client.js';

const secret = (bytes: number) => ({ data: { key: Buffer.alloc(bytes, 9).toString('base64') } });
const where = 'kapi-system/kapi-apiserver-jwt';

describe('keyFromSecret', () => {
  test('when the Secret holds 32 bytes or more, then that is the key', () => {
    expect(keyFromSecret(secret(48), where)).toEqual({ key: Buffer.alloc(48, 9) });
  });
  test.each([
    ['when the Secret is missing, then it is refused', undefined, /not found/],
    ['when data.key is missing, then it is refused', { data: {} }, /no data.key/],
    ['when the key is shorter than 32 bytes, then it is refused', secret(MIN_KEY_BYTES - 1), /31 bytes; at least 32/],
  ])('%s', (_name, given, problem) => {
    const result = keyFromSecret(given, where);
    expect('problem' in result && result.problem).toMatch(problem);
  });
});

describe('SecretSigningKey', () => {
  const options = { secret: { namespace: 'kapi-system', name: 'kapi-apiserver-jwt' } };

  test('when the Secret is usable, then the key is loaded and readiness passes, with the key in no log line', async () => {
    const { logger, lines } = capturingLogger();
    const client = stubClient(() => secret(32));
    const key = new SecretSigningKey({ ...options, client, logger, allowGenerated: false });
    expect(key.readiness.notReadyReason()).toBeDefined();
    await key.start();
    expect(key.key()).toEqual(Buffer.alloc(32, 9));
    expect(key.readiness.name).toBe('signing-key');
    expect(key.readiness.notReadyReason()).toBeUndefined();
    expect(client.requests[0]?.path).toBe('/api/v1/namespaces/kapi-system/secrets/kapi-apiserver-jwt');
    expect(lines.join('\n')).not.toContain(Buffer.alloc(32, 9).toString('base64'));
    key.stop();
  });

  test('when the Secret is missing outside the sandbox, then there is no key and readiness says why', async () => {
    const { logger } = capturingLogger();
    const key = new SecretSigningKey({
      ...options,
      client: stubClient(() => Promise.reject(kubeError(404))),
      logger,
      allowGenerated: false,
    });
    await key.start();
    key.stop();
    expect(key.key()).toBeUndefined();
    expect(key.readiness.notReadyReason()).toMatch(/not found/);
  });

  test('when the key is too short outside the sandbox, then it is refused', async () => {
    const { logger } = capturingLogger();
    const key = new SecretSigningKey({
      ...options,
      client: stubClient(() => secret(16)),
      logger,
      allowGenerated: false,
    });
    await key.start();
    key.stop();
    expect(key.key()).toBeUndefined();
    expect(key.readiness.notReadyReason()).toMatch(/16 bytes/);
  });

  test('when the Secret is missing in the sandbox, then a random key is generated with a warning', async () => {
    const { logger, lines } = capturingLogger();
    const key = new SecretSigningKey({
      ...options,
      client: stubClient(() => Promise.reject(kubeError(404))),
      logger,
      allowGenerated: true,
    });
    await key.start();
    expect(key.key()?.length).toBe(32);
    expect(key.key()?.equals(Buffer.alloc(32))).toBe(false);
    expect(lines.some((line) => line.includes('"level":"warn"') && line.includes('generated in memory'))).toBe(true);
  });

  test('when the cluster cannot be reached, then there is no key and readiness names the error', async () => {
    const { logger } = capturingLogger();
    const outage = stubClient(() => Promise.reject(new Error('connect ECONNREFUSED')));
    const strict = new SecretSigningKey({ ...options, client: outage, logger, allowGenerated: false });
    await strict.start();
    strict.stop();
    expect(strict.key()).toBeUndefined();
    expect(strict.readiness.notReadyReason()).toMatch(/ECONNREFUSED/);
  });
});
