// The client a per-IP counter counts (docs/api.md#rate-limits). An IPv6 client is its /64: a single
// subscriber line, host or VM is routinely handed a whole /64 and can pick any of its 2^64 addresses,
// so counting full addresses would give it as many fresh buckets as it likes. An IPv4-mapped address
// (::ffff:a.b.c.d, which a dual-stack socket reports for IPv4 clients) is that IPv4 address: every
// IPv4 client lies in one /64 of that form and must keep a bucket of its own.
import { isIP } from 'node:net';

/** The eight 16-bit groups of an IPv6 address, or null when `ip` is not one. */
function ipv6Groups(ip: string): number[] | null {
  const zone = ip.indexOf('%');
  let s = zone === -1 ? ip : ip.slice(0, zone);
  if (isIP(s) !== 6) return null;
  // A dotted IPv4 tail is the last two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const gap = s.indexOf('::');
  const part = (p: string) => (p === '' ? [] : p.split(':'));
  let groups: string[];
  if (gap === -1) groups = part(s);
  else {
    const head = part(s.slice(0, gap));
    const tail = part(s.slice(gap + 2));
    groups = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  }
  return groups.map((g) => parseInt(g, 16));
}

/** `a.b.c.d` for an IPv4 client (mapped or not), `x:x:x:x::/64` for an IPv6 one; anything else as it is. */
export function clientBucketOf(ip: string): string {
  const g = ipv6Groups(ip);
  if (!g) return ip;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  }
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}
