// Servers that start answering later, for the start-up retries (src/startup.test.ts): a port reserved
// now and listened on only when the test says so. What answers there is the real PostgreSQL or Redis
// of the run through a TCP proxy (TEST_DATABASE_URL, TEST_REDIS_URL), or, on a machine without them,
// a tiny local server speaking just enough of the protocol for a connect and one query: PostgreSQL's
// start-up, `select 1` and terminate; Redis's HELLO, INFO, CLIENT and PING.
import net from 'node:net';

/** A port nothing listens on at the moment (the kernel's choice, released at once). */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

type Handler = (socket: net.Socket) => void;

/** A TCP proxy to `target` (host:port). */
export function proxyTo(target: URL, defaultPort: number): Handler {
  return (socket) => {
    const upstream = net.connect(Number(target.port || defaultPort), target.hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  };
}

const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const cstr = (s: string) => Buffer.from(`${s}\0`, 'utf8');
const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** Enough of PostgreSQL's wire protocol (v3, no TLS, trust authentication) for `select 1`. */
export const fakePostgres: Handler = (socket) => {
  let buffer = Buffer.alloc(0);
  let started = false;
  const ready = message('Z', Buffer.from('I'));
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (!started) {
        if (buffer.length < 4) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        const code = buffer.readInt32BE(4);
        buffer = buffer.subarray(length);
        // An SSLRequest is declined; the start-up message that follows is answered.
        if (code === 80877103) {
          socket.write('N');
          continue;
        }
        started = true;
        socket.write(Buffer.concat([message('R', int32(0)), message('K', Buffer.concat([int32(1), int32(2)])), ready]));
        continue;
      }
      if (buffer.length < 5) return;
      const type = String.fromCharCode(buffer[0]!);
      const length = buffer.readInt32BE(1);
      if (buffer.length < length + 1) return;
      buffer = buffer.subarray(length + 1);
      if (type === 'X') {
        socket.end();
        return;
      }
      if (type === 'Q') {
        const field = Buffer.concat([cstr('?column?'), int32(0), int16(0), int32(23), int16(4), int32(-1), int16(0)]);
        socket.write(
          Buffer.concat([
            message('T', Buffer.concat([int16(1), field])),
            message('D', Buffer.concat([int16(1), int32(1), Buffer.from('1')])),
            message('C', cstr('SELECT 1')),
            ready,
          ]),
        );
      }
    }
  });
};

/** Enough of Redis's protocol for ioredis to connect and PING. */
export const fakeRedis: Handler = (socket) => {
  let text = '';
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    // Each command arrives as an array of bulk strings: *N, then $len and the bytes, N times.
    for (;;) {
      const m = /^\*(\d+)\r\n/.exec(text);
      if (!m) return;
      let at = m[0].length;
      const parts: string[] = [];
      for (let i = 0; i < Number(m[1]); i++) {
        const head = /^\$(\d+)\r\n/.exec(text.slice(at));
        if (!head) return;
        const start = at + head[0].length;
        const end = start + Number(head[1]);
        if (text.length < end + 2) return;
        parts.push(text.slice(start, end));
        at = end + 2;
      }
      text = text.slice(at);
      const command = (parts[0] ?? '').toUpperCase();
      if (command === 'HELLO') socket.write('%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n');
      else if (command === 'INFO') {
        const info = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n';
        socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
      } else if (command === 'PING') socket.write('+PONG\r\n');
      else if (command === 'QUIT') socket.end('+OK\r\n');
      else socket.write('+OK\r\n');
    }
  });
};

/** A server on `port` from the moment `open` is called until `close`. */
export function lateServer(port: number, handler: Handler) {
  const server = net.createServer(handler);
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return {
    open: () =>
      new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve())),
    async close() {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
