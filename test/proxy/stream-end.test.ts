import { FrameCursor, closeFrame } from '../../src/proxy/stream-end.js';

/** A frame as a server writes it (unmasked) or a client (masked), with the shortest length encoding. */
function frame(payloadLength: number, masked = false): Buffer {
  const length =
    payloadLength < 126
      ? Buffer.from([payloadLength | (masked ? 0x80 : 0)])
      : payloadLength < 65_536
        ? Buffer.from([126 | (masked ? 0x80 : 0), payloadLength >> 8, payloadLength & 0xff])
        : Buffer.concat([Buffer.from([127 | (masked ? 0x80 : 0)]), bigEndian64(payloadLength)]);
  return Buffer.concat([
    Buffer.from([0x82]),
    length,
    masked ? Buffer.alloc(4, 7) : Buffer.alloc(0),
    Buffer.alloc(payloadLength, 1),
  ]);
}

function bigEndian64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return bytes;
}

describe('FrameCursor', () => {
  test.each([
    ['an empty frame', [frame(0)]],
    ['a short frame', [frame(5)]],
    ['a 16-bit length frame', [frame(300)]],
    ['a 64-bit length frame', [frame(70_000)]],
    ['a masked frame', [frame(10, true)]],
    ['several frames in a row', [frame(3), frame(0), frame(200), frame(1)]],
  ])(
    'when %s is followed byte by byte, then the cursor is between frames exactly at each frame end',
    (_case, frames) => {
      const ends = new Set<number>();
      let offset = 0;
      for (const f of frames) ends.add((offset += f.length));
      const bytes = Buffer.concat(frames);
      const cursor = new FrameCursor();
      for (let i = 0; i < bytes.length; i++) {
        cursor.advance(bytes.subarray(i, i + 1), false);
        expect({ at: i + 1, between: cursor.between }).toEqual({ at: i + 1, between: ends.has(i + 1) });
      }
    },
  );

  test('when a chunk holds the end of one frame and the start of the next, then stopping at the boundary takes only the end', () => {
    const cursor = new FrameCursor();
    const first = frame(300);
    const second = frame(20);
    cursor.advance(first.subarray(0, 100), false);
    expect(cursor.between).toBe(false);
    const rest = Buffer.concat([first.subarray(100), second]);
    expect(cursor.advance(rest, true)).toBe(first.length - 100);
    expect(cursor.between).toBe(true);
    expect(cursor.advance(second, true)).toBe(0);
  });

  test('when the header itself is split, then the cursor waits for its length bytes', () => {
    const cursor = new FrameCursor();
    const f = frame(70_000);
    // between two frames, stopping at a boundary takes nothing: only what already started is finished
    expect(cursor.advance(f.subarray(0, 3), true)).toBe(0);
    expect(cursor.advance(f.subarray(0, 3), false)).toBe(3);
    expect(cursor.between).toBe(false);
    expect(cursor.advance(f.subarray(3), true)).toBe(f.length - 3);
    expect(cursor.between).toBe(true);
  });
});

describe('closeFrame', () => {
  test('when a close frame is built, then it is an unmasked final close frame with the code and reason', () => {
    expect([...closeFrame(1008, 'bye')]).toEqual([0x88, 5, 0x03, 0xf0, 0x62, 0x79, 0x65]);
  });

  test('when the reason is too long for a control frame, then it is cut to 123 bytes', () => {
    const built = closeFrame(1000, 'x'.repeat(500));
    expect(built[1]).toBe(125);
    expect(built).toHaveLength(127);
  });
});
