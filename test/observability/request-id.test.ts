import { newRequestId } from '../../src/observability/request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newRequestId', () => {
  test('when many ids are made, then each is UUID-shaped (version 4 bits) and none repeats', () => {
    const ids = Array.from({ length: 20_000 }, () => newRequestId());
    expect(ids.every((id) => UUID.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('when ids follow one another, then only their last part differs (a counter behind a random part)', () => {
    const [a, b] = [newRequestId(), newRequestId()];
    expect(a.slice(0, 24)).toBe(b.slice(0, 24));
    expect(parseInt(b.slice(24), 16) - parseInt(a.slice(24), 16)).toBe(1);
  });
});
