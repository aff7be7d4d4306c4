import { jest } from '@jest/globals';
import { createLogger, flushLogs, isoNow, type Logger } from '../../src/observability/logger.js';

function capture(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const logger = createLogger('debug', { sink: (line) => lines.push(line) });
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
  test('when a child logger writes, then its context is on the line and the entry’s own fields win', () => {
    const { lines, logger } = capture();
    logger.child({ component: 'users', cache: 'users' }).info('synced', { cache: 'sessions', count: 2 });
    expect(JSON.parse(lines[0]!)).toMatchObject({ component: 'users', cache: 'sessions', count: 2, message: 'synced' });
  });

  test('when fields are named level, message or timestamp, then they cannot stand in for the real ones', () => {
    const { lines, logger } = capture();
    logger.info('real', { level: 'error', message: 'forged', timestamp: 'then' });
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 'info', message: 'real' });
    expect(new Date(entry.timestamp).toISOString()).toBe(entry.timestamp);
  });

  test('when an entry comes with its fields encoded (the audit line), then its text is what info() writes for them', () => {
    const { lines, logger } = capture();
    const fields = { audit: true, path: '/api/v1/nodes/"n"\u2028\ud800', status: 200, durationMs: 0.25 };
    const names = new Set(Object.keys(fields));
    const members = Object.entries(fields)
      .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
      .join(',');
    for (const one of [logger, logger.child({ component: 'forwarding', status: 'context' })]) {
      one.info('request', fields);
      one.infoEncoded('request', members, names);
    }
    const withoutTime = (line: string) => line.replace(/"timestamp":"[^"]*"/, '"timestamp":"T"');
    expect(lines).toHaveLength(4);
    expect(withoutTime(lines[1]!)).toBe(withoutTime(lines[0]!));
    // with a context: the same fields and values (the entry's own win, and are written once)
    expect(lines[3]!.match(/"status"/g)).toHaveLength(1);
    expect(JSON.parse(lines[3]!)).toEqual({ ...JSON.parse(lines[2]!), timestamp: expect.any(String) });
    expect(new Date(JSON.parse(lines[3]!).timestamp).toISOString()).toBe(JSON.parse(lines[3]!).timestamp);
  });

  test('when the level is warn, then encoded entries are not written either', () => {
    const lines: string[] = [];
    createLogger('warn', { sink: (line) => lines.push(line) }).infoEncoded(
      'request',
      '"audit":true',
      new Set(['audit']),
    );
    expect(lines).toEqual([]);
  });

  test('when the level is warn, then info and debug entries are not written and say so through isLevelEnabled', () => {
    const lines: string[] = [];
    const logger = createLogger('warn', { sink: (line) => lines.push(line) });
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(lines.map((line) => JSON.parse(line).message)).toEqual(['w', 'e']);
    expect([logger.isLevelEnabled('info'), logger.isLevelEnabled('warn')]).toEqual([false, true]);
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

  test('when lines fill the waiting buffer or one is larger than it, then every line reaches stdout whole and in order', async () => {
    await capturedStdout(async (written) => {
      const logger = createLogger('info');
      const long = 'é'.repeat(30_000);
      for (let i = 0; i < 200; i++) logger.info(`line ${i}`, { padding: 'x'.repeat(1_000) });
      logger.info('huge', { long });
      logger.info('after');
      flushLogs();
      const lines = written
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.message)).toEqual([
        ...Array.from({ length: 200 }, (_, i) => `line ${i}`),
        'huge',
        'after',
      ]);
      expect(lines[200].long).toBe(long);
      expect(written.length).toBeGreaterThan(2);
    });
  });

  test('when flushLogs is called (as on exit), then waiting lines are written at once', async () => {
    await capturedStdout(async (written) => {
      createLogger('info').info('third');
      expect(written).toEqual([]);
      flushLogs();
      expect(written).toHaveLength(1);
      expect(messages(written[0]!)).toEqual(['third']);
    });
  });
});

describe('isoNow', () => {
  test('when times fall within one second, across seconds and across days, then each is written as toISOString writes it', () => {
    const base = Date.UTC(2026, 10, 28, 23, 59, 58, 0);
    const times = [
      base,
      base + 1,
      base + 999,
      base + 1000,
      base + 1001,
      base + 1999,
      base + 2000,
      base + 2007,
      base + 9,
      0,
      999,
    ];
    expect(times.map((t) => isoNow(t))).toEqual(times.map((t) => new Date(t).toISOString()));
  });
});
