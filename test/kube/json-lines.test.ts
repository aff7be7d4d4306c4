import { describe, expect, it } from '@jest/globals';
import { JsonLineSplitter } from '../../src/kube/json-lines.js';

const stream = '{"type":"ADDED","n":1}\n{"type":"MODIFIED","n":"東京"}\n\n{"type":"DELETED","n":3}\n';
const expected = ['{"type":"ADDED","n":1}', '{"type":"MODIFIED","n":"東京"}', '{"type":"DELETED","n":3}'];

function feed(chunks: string[]): { lines: string[]; rest: string } {
  const splitter = new JsonLineSplitter();
  const lines: string[] = [];
  for (const chunk of chunks) splitter.push(chunk, (line) => lines.push(line));
  return { lines, rest: splitter.rest() };
}

describe('JsonLineSplitter', () => {
  it('when the stream is cut into two at any position, then the same lines come out', () => {
    for (let at = 0; at <= stream.length; at++) {
      expect(feed([stream.slice(0, at), stream.slice(at)])).toEqual({ lines: expected, rest: '' });
    }
  });

  it('when the stream arrives one character at a time, then the same lines come out', () => {
    expect(feed([...stream])).toEqual({ lines: expected, rest: '' });
  });

  it('when one chunk holds several events, then each is its own line', () => {
    expect(feed([stream])).toEqual({ lines: expected, rest: '' });
  });

  it('when the stream ends without a final newline, then the unfinished text is the rest', () => {
    expect(feed(['{"a":1}\n{"b"', ':2}'])).toEqual({ lines: ['{"a":1}'], rest: '{"b":2}' });
  });

  it('when lines end in CRLF or are blank, then blank lines are skipped', () => {
    expect(feed(['{"a":1}\r\n', '\r\n', '  \n{"b":2}\n'])).toEqual({ lines: ['{"a":1}\r', '{"b":2}'], rest: '' });
  });
});
