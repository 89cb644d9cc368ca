import { embeddedIpv4, isForbiddenAddress } from './forbidden-addresses.js';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456:789a::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '64:ff9b::10.0.0.1',
    '64:ff9b::127.0.0.1',
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1:808:8:800::',
    '64:ff9b:1::808:808',
    '::ffff:0:127.0.0.1',
    '::ffff:0:a9fe:a9fe',
    '::ffff:0:10.1.2.3',
    '::ffff:0:0:1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '169.253.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '64:ff9b::8.8.8.8',
    '::ffff:0:8.8.8.8',
    '2002:808:808::1',
    '203.0.113.10',
    '2001:db8::1',
  ])('allows the public address %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it('reads the IPv4 address out of the IPv6 forms that carry one', () => {
    expect(embeddedIpv4('::ffff:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIpv4('::ffff:c0a8:1')).toBe('192.168.0.1');
    expect(embeddedIpv4('64:ff9b::c0a8:1')).toBe('192.168.0.1');
    expect(embeddedIpv4('2002:c0a8:1::')).toBe('192.168.0.1');
    expect(embeddedIpv4('::ffff:0:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIpv4('::ffff:0:c0a8:1')).toBe('192.168.0.1');
    expect(embeddedIpv4('2606:4700::1')).toBeUndefined();
  });
});
