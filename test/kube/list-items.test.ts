import { describe, expect, it } from '@jest/globals';
import { ListItemScanner } from '../../src/kube/list-items.js';

/** Feeds `text` in chunks of `size` bytes; the items seen and the rest. */
function scan(text: string | Buffer, size = Infinity): { items: unknown[]; rest: Record<string, unknown> } {
  const items: unknown[] = [];
  const scanner = new ListItemScanner((item) => items.push(item));
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  const step = Number.isFinite(size) ? size : bytes.length || 1;
  for (let at = 0; at < bytes.length; at += step) scanner.push(bytes.subarray(at, at + step));
  return { items, rest: scanner.rest() };
}

const restOf = (list: Record<string, unknown>) => {
  const { items: _items, ...rest } = list;
  return rest;
};

const tricky = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'eyJ9fQ==', remainingItemCount: 7 },
  items: [
    {
      metadata: {
        name: 'a',
        annotations: {
          json: '{"x":[1,2,{"y":"}"}],"z":"\\"quoted\\" \\\\"}',
          brackets: '[[[{{{',
          backslashes: '\\\\\\',
          unicode: 'ünïcödé ✓ 日本 🚀',
          control: '\u0001\u001f\t\n',
        },
      },
      spec: { containers: [{ name: 'c', args: ['"', '\\', '{', ']'] }], priority: -1.5e3, flag: true, none: null },
    },
    { metadata: { name: 'b' }, spec: {} },
    {},
  ],
};

describe('ListItemScanner', () => {
  it('when a list arrives whole, then every item is handed over parsed and the other members come back', () => {
    const { items, rest } = scan(JSON.stringify(tricky));
    expect(items).toEqual(tricky.items);
    expect(rest).toEqual(restOf(tricky));
  });

  it('when the answer is split at every possible byte, then the items and members are the same', () => {
    const text = JSON.stringify(tricky);
    for (const size of [1, 2, 3, 5, 7, 13, 64]) {
      const { items, rest } = scan(text, size);
      expect(items).toEqual(tricky.items);
      expect(rest).toEqual(restOf(tricky));
    }
  });

  it('when the JSON is indented, or items come before metadata, then it reads the same', () => {
    const reordered = { items: tricky.items, metadata: tricky.metadata, kind: 'PodList', apiVersion: 'v1' };
    for (const text of [
      JSON.stringify(tricky, null, 2),
      JSON.stringify(reordered),
      JSON.stringify(reordered, null, '\t'),
    ]) {
      const { items, rest } = scan(`\n ${text} \r\n`, 3);
      expect(items).toEqual(tricky.items);
      expect(rest).toEqual(restOf(tricky));
    }
  });

  it('when the list is empty, has null items or none at all, then no item is seen', () => {
    for (const text of ['{"metadata":{"resourceVersion":"1"},"items":[]}', '{"items":null,"metadata":{}}', '{}']) {
      const { items, rest } = scan(text, 1);
      expect(items).toEqual([]);
      expect(rest).toEqual(restOf(JSON.parse(text) as Record<string, unknown>));
    }
  });

  it('when an item is handed over, then the bytes before it are no longer held', () => {
    const seen: number[] = [];
    const scanner = new ListItemScanner(() => seen.push(seen.length));
    scanner.push(Buffer.from(`{"metadata":{},"items":[{"a":"${'x'.repeat(100_000)}"},`));
    expect(seen).toHaveLength(1);
    scanner.push(Buffer.from('{"b":'));
    expect(scanner.bufferedBytes).toBe('{"b":'.length);
    scanner.push(Buffer.from('1}]}'));
    expect(seen).toHaveLength(2);
    expect(scanner.rest()).toEqual({ metadata: {} });
  });

  it.each([
    ['an array', '[{"a":1}]'],
    ['items that are not objects', '{"items":[1,2]}'],
    ['items that are an object', '{"items":{"a":1}}'],
    ['a truncated answer', '{"items":[{"a":1}'],
    ['an unterminated string', '{"items":[{"a":"x'],
    ['a member without a colon', '{"kind" "x"}'],
    ['data after the answer', '{"items":[]} {}'],
    ['a broken item', '{"items":[{"a":tru}]}'],
  ])('when the answer is %s, then reading it fails with a SyntaxError', (_name, text) => {
    expect(() => scan(text, 2)).toThrow(SyntaxError);
  });

  it('when items are many and large, then each is parsed exactly as JSON.parse of the whole would', () => {
    const list = {
      metadata: { resourceVersion: '9' },
      items: Array.from({ length: 300 }, (_, i) => ({
        metadata: { name: `pod-${i}`, labels: { app: `a${i % 7}`, 'x\\"y': '}{' }, uid: `${i}` },
        status: { phase: i % 2 ? 'Running' : 'Pending', message: '\\'.repeat(i % 5) + '"' },
      })),
    };
    const text = JSON.stringify(list);
    for (const size of [97, 4096, 65536]) expect(scan(text, size).items).toEqual(list.items);
  });
});
