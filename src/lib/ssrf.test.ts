// The SSRF rules (docs/api.md#webhook-url-rules) as pure functions: every address form and URL shape.
import { describe, expect, it } from 'vitest';
import { isPrivateAddress, unsafeUrlReason } from './ssrf.js';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '192.0.0.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '0:0:0:0:0:0:0:1',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::ffff:100.64.0.1',
    '::127.0.0.1',
    '::7f00:1',
    '::ffff:0:7f00:1',
    '64:ff9b::7f00:1',
    'fec0::1',
    '2001:db8::1',
    // NAT64 (well-known prefix): whatever IPv4 address it embeds, in hex or dotted form.
    '64:ff9b::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '64:ff9b::8.8.8.8',
    // Local-use NAT64.
    '64:ff9b:1::1',
    '64:ff9b:1:ffff::7f00:1',
    // 6to4: the second and third groups are an IPv4 address, reached through a relay.
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::',
    '2002:808:808::1',
    // Teredo: the tunnelled IPv4 address is in the last groups, bits inverted.
    '2001::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001:0:ffff:ffff:ffff:ffff:ffff:ffff',
  ])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '172.15.255.255',
    '100.63.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '2001:1::1',
    '2003::1',
    '2001:4860::1',
    '64:ff9b:2::1',
    '64:ff9a::1',
  ])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it('anything that is not an IP address counts as private', () => {
    for (const v of ['', 'localhost', 'example.com', '127.1', '999.0.0.1', '::ffff:zz'])
      expect(isPrivateAddress(v), v).toBe(true);
  });
});

describe('unsafeUrlReason', () => {
  it.each([
    'http://localhost/',
    'http://LOCALHOST./',
    'http://app.localhost/',
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://0.0.0.0/',
    'http://0/',
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/',
    'http://100.64.0.1/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::127.0.0.1]/',
    'http://[::ffff:0:7f00:1]/',
    'http://[64:ff9b::127.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://[2002:7f00:1::1]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'http://[2001::7f00:1]/',
    'http://intranet/',
    'http://intranet./',
    'ftp://example.com/',
    'file:///etc/passwd',
    'ws://example.com/',
    'javascript:alert(1)',
    'example.com/hook',
    '',
    'https://user:pass@example.com/',
  ])('refuses %s', (url) => {
    expect(unsafeUrlReason(url)).toEqual(expect.any(String));
  });

  it.each([
    'https://example.com/hook',
    'http://example.com/hook',
    'http://172.32.0.1/',
    'http://8.8.8.8:8080/x',
    'https://[2606:4700:4700::1111]/',
    'HTTPS://Example.COM/Hook?x=1',
  ])('accepts %s', (url) => {
    expect(unsafeUrlReason(url)).toBeNull();
  });

  it('gives the reason', () => {
    expect(unsafeUrlReason('ftp://example.com/')).toMatch(/http/);
    expect(unsafeUrlReason('http://intranet/')).toMatch(/hostname/);
    expect(unsafeUrlReason('http://localhost/')).toMatch(/localhost/);
    expect(unsafeUrlReason('http://10.0.0.1/')).toMatch(/private/);
  });
});
