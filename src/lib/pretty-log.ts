// LOG_FORMAT=pretty (the default in development at a terminal): pino's JSON lines turned into lines a
// developer reads. A request is one line (method, path with its secrets already redacted, status,
// milliseconds); a mail printed instead of sent is a block with its text, links included; an error
// carries its stack; other fields follow the message as key=value. Production keeps JSON.

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '31' };
/** Fields shown in another form, or noise at a terminal. */
const HIDDEN = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'msg',
  'reqId',
  'req',
  'res',
  'responseTime',
  'mail',
  'err',
]);

interface Line {
  level?: number;
  time?: number;
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
  mail?: { to?: string; subject?: string };
  err?: { message?: string; stack?: string };
  [key: string]: unknown;
}

const clock = (t: number | undefined) => new Date(t ?? Date.now()).toTimeString().slice(0, 8);

function value(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One JSON log line as the readable text printed for it (ending with a newline). */
export function prettyLine(json: string, color = false): string {
  let o: Line;
  try {
    o = JSON.parse(json) as Line;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const level = o.level ?? 30;
  const head = `${paint('90', clock(o.time))} ${paint(COLORS[level] ?? '0', (LEVELS[level] ?? String(level)).padEnd(5))}`;
  const err = o.err ? `\n${(o.err.stack ?? o.err.message ?? '').replace(/^/gm, '    ')}` : '';
  if ((o.msg === 'request completed' || o.msg === 'request errored') && o.req) {
    const status = o.res?.statusCode ?? 0;
    const shown = paint(status >= 500 ? '31' : status >= 400 ? '33' : '0', String(status));
    return `${head} ${o.req.method} ${o.req.url} ${shown} ${Math.round(o.responseTime ?? 0)} ms${err}\n`;
  }
  if (o.mail && typeof o.msg === 'string') {
    // "mail (note):\n<text>": the text indented under a header naming the recipient and subject.
    const cut = o.msg.indexOf(':\n');
    const note = cut === -1 ? '' : o.msg.slice(0, cut).replace(/^mail \(|\)$/g, '');
    const text = cut === -1 ? o.msg : o.msg.slice(cut + 2);
    const rule = paint('36', '│');
    return (
      `${head} ${paint('36', `mail to ${o.mail.to}: ${o.mail.subject}`)}${note ? paint('90', ` (${note})`) : ''}\n` +
      text
        .trimEnd()
        .split('\n')
        .map((l) => `         ${rule} ${l}`)
        .join('\n') +
      '\n'
    );
  }
  const rest = Object.entries(o)
    .filter(([k, v]) => !HIDDEN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(' ');
  return `${head} ${o.msg ?? ''}${rest ? ` ${paint('90', rest)}` : ''}${err}\n`;
}

/** A pino destination writing readable lines to `out`. */
export function prettyDestination(
  out: { write(s: string): unknown } = process.stdout,
  color = Boolean(process.stdout.isTTY),
) {
  return {
    write(chunk: string) {
      out.write(prettyLine(chunk, color));
    },
  };
}
