import { ConnectionCap } from '../../src/server/connection-cap.js';

describe('ConnectionCap', () => {
  test('when an address reaches the cap, then its next connection is refused until one of its own closes', () => {
    const cap = new ConnectionCap(2);
    expect([cap.admit('192.0.2.1'), cap.admit('192.0.2.1'), cap.admit('192.0.2.1')]).toEqual([true, true, false]);
    expect(cap.admit('192.0.2.2')).toBe(true);
    expect(cap.openFrom('192.0.2.1')).toBe(2);
    cap.release('192.0.2.1');
    expect(cap.admit('192.0.2.1')).toBe(true);
    expect(cap.admit('192.0.2.1')).toBe(false);
  });

  test('when refusals go on, then they are reported once per spell, and again after the address fell under the cap', () => {
    const reported: string[] = [];
    const cap = new ConnectionCap(1, [], (address) => reported.push(address));
    cap.admit('2001:db8::1');
    cap.admit('2001:db8::1');
    cap.admit('2001:db8::1');
    expect(reported).toEqual(['2001:db8::1']);
    cap.release('2001:db8::1');
    cap.admit('2001:db8::1');
    cap.admit('2001:db8::1');
    expect(reported).toEqual(['2001:db8::1', '2001:db8::1']);
  });

  test.each([
    ['a listed address', ['10.0.0.7'], '10.0.0.7', true],
    ['an address in a listed IPv4 CIDR', ['10.0.0.0/8'], '10.200.3.4', true],
    ['an address in a listed IPv6 CIDR', ['fd00::/8'], 'fd12::5', true],
    ['an address outside the listed ones', ['10.0.0.0/8', '192.168.1.7'], '192.168.1.8', false],
  ])(
    'when the client is %s of the trusted proxies, then it is capped: %s → exempt %s',
    (_case, trusted, address, exempt) => {
      const cap = new ConnectionCap(1, trusted);
      cap.admit(address);
      expect(cap.admit(address)).toBe(exempt);
    },
  );

  test('when the cap is 0, then nothing is capped or counted', () => {
    const cap = new ConnectionCap(0);
    for (let i = 0; i < 10_000; i++) expect(cap.admit('192.0.2.1')).toBe(true);
    expect(cap.openFrom('192.0.2.1')).toBe(0);
  });

  test('when a connection closes that was never counted, then the counts stay right', () => {
    const cap = new ConnectionCap(2);
    cap.release('192.0.2.9');
    cap.admit('192.0.2.9');
    cap.release('192.0.2.9');
    cap.release('192.0.2.9');
    expect(cap.openFrom('192.0.2.9')).toBe(0);
  });
});
