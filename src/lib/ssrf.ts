// Which webhook targets are refused: loopback, private, link-local, CGNAT, unspecified and other
// non-public ranges, in IPv4 and IPv6 (IPv4-mapped included), the IPv6 ranges that carry an IPv4
// address to a gateway or relay (NAT64, 6to4, Teredo), the `localhost` names, hostnames without a
// dot, and schemes other than http and https.
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  // Unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d (the URL parser writes
  // http://[::127.0.0.1]/ as [::7f00:1]), then IPv4-translated ::ffff:0:a.b.c.d.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['100::', 64],
  ['fe80::', 10],
  ['fec0::', 10],
  ['fc00::', 7],
  ['ff00::', 8],
  // NAT64, well-known prefix: the gateway reaches the IPv4 address in the last 32 bits, whichever
  // it is (64:ff9b::7f00:1 is 127.0.0.1 seen from the gateway). The whole prefix is refused.
  ['64:ff9b::', 96],
  // NAT64, local-use prefix: translated by a gateway of the local network, to any address.
  ['64:ff9b:1::', 48],
  // 6to4: 2002:AABB:CCDD::/48 is the IPv4 address AA.BB.CC.DD behind a relay.
  ['2002::', 16],
  // Teredo: the server and the client's IPv4 address are embedded; the relay reaches them.
  ['2001::', 32],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address (::ffff:7f00:1), if any. */
function embeddedIPv4(ip: string): string | null {
  const m = /^(?:0*:)*:?(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip) ?? /^::ffff:(.+)$/i.exec(ip);
  if (m && isIP(m[1]!) === 4) return m[1]!;
  const hex = /^(?:0*:)*:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    if (blocked.check(ip, 'ipv6')) return true;
    const v4 = embeddedIPv4(ip);
    return v4 ? blocked.check(v4, 'ipv4') : false;
  }
  return true;
}

/** Null when the URL may be used as a webhook target, else the reason. */
export function unsafeUrlReason(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials';
  // The URL parser has already normalised decimal, octal and hex IPv4 forms (http://2130706433/).
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point to localhost';
  if (isIP(host)) return isPrivateAddress(host) ? 'must not point to a private, loopback or link-local address' : null;
  if (!host.includes('.')) return 'must have a fully qualified hostname';
  return null;
}
