import { jest } from '@jest/globals';
import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger } from '../../src/observability/logger.js';

function capture(): { lines: string[]; logger: winston.Logger } {
  const lines: string[] = [];
  const logger = createLogger('debug');
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString().trim());
          done();
        },
      }),
    }),
  );
  return { lines, logger };
}

describe('createLogger', () => {
  test('when an entry is logged, then it is one JSON line with level, message, fields and an ISO timestamp', () => {
    const { lines, logger } = capture();
    logger.info('request', { requestId: 'r-1', status: 200 });
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 'info', message: 'request', requestId: 'r-1', status: 200 });
    expect(new Date(entry.timestamp).toISOString()).toBe(entry.timestamp);
  });

  test.each(['password', 'client_secret', 'Authorization', 'token', 'refresh_token', 'signingKey', 'secret'])(
    'when a field is named %s, then its value never reaches the line',
    (field) => {
      const { lines, logger } = capture();
      logger.warn('oops', { [field]: 'hunter2-value' });
      expect(lines[0]).not.toContain('hunter2-value');
      expect(JSON.parse(lines[0]!)[field]).toBe('[redacted]');
    },
  );

  test('when fields cannot be encoded (a cycle), then a line is still written and nothing throws', () => {
    const { lines, logger } = capture();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => logger.error('broken', { cyclic })).not.toThrow();
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', message: 'broken', logError: expect.any(String) });
  });
});

describe('stdout batching', () => {
  test('when several lines are logged in one turn, then they reach stdout together, in order, by the next turn', async () => {
    const { flushLogs } = await import('../../src/observability/logger.js');
    const written: string[] = [];
    const original = process.stdout.write.bind(process.stdout);
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write);
    try {
      const logger = createLogger('info');
      logger.info('first');
      logger.info('second');
      expect(written).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(written).toHaveLength(1);
      const lines = written[0]!
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).message);
      expect(lines).toEqual(['first', 'second']);
      logger.info('third');
      flushLogs();
      expect(written).toHaveLength(2);
    } finally {
      spy.mockRestore();
      void original;
    }
  });
});
