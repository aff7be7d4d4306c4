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
  async function capturedStdout(run: (written: string[]) => Promise<void>): Promise<void> {
    const written: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write);
    try {
      await run(written);
    } finally {
      spy.mockRestore();
    }
  }
  const messages = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).message);

  test('when several info lines are logged, then they reach stdout together, in order, in one write', async () => {
    await capturedStdout(async (written) => {
      const logger = createLogger('info');
      logger.info('first');
      logger.info('second');
      expect(written).toEqual([]);
      for (let i = 0; i < 100 && written.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(written).toHaveLength(1);
      expect(messages(written[0]!)).toEqual(['first', 'second']);
    });
  });

  test('when a warning or an error is logged, then it and the lines waiting before it are written at once', async () => {
    await capturedStdout(async (written) => {
      const logger = createLogger('info');
      logger.info('routine');
      logger.error('failure');
      expect(written).toHaveLength(1);
      expect(messages(written[0]!)).toEqual(['routine', 'failure']);
      logger.warn('warning');
      expect(written).toHaveLength(2);
    });
  });

  test('when flushLogs is called (as on exit), then waiting lines are written at once', async () => {
    const { flushLogs } = await import('../../src/observability/logger.js');
    await capturedStdout(async (written) => {
      createLogger('info').info('third');
      expect(written).toEqual([]);
      flushLogs();
      expect(written).toHaveLength(1);
      expect(messages(written[0]!)).toEqual(['third']);
    });
  });
});
