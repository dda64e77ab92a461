// Wake-ups: the transaction that records an event sends NOTIFY on commit (src/platform/outbox.ts),
// so an idle worker claims new deliveries at once instead of at its next poll. The poll still runs
// for retries coming due and as the fallback while the listening connection is down.
import pg from 'pg';
import type { DbHandle } from '../../../db/client.js';
import { WAKE_CHANNEL } from '../../../platform/outbox.js';

/** Calls `onWake` on every notification; resolves to the function that stops listening (null without a database to listen on). */
export async function listenForWakeups(h: DbHandle, onWake: () => void): Promise<(() => Promise<void>) | null> {
  if (h.pglite) return await h.pglite.listen(WAKE_CHANNEL, onWake);
  if (!h.url) return null;
  const url = h.url;
  // A connection of its own: LISTEN belongs to a session, which a pooled connection is not.
  let client: pg.Client | null = null;
  let stopped = false;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: url });
    c.on('notification', onWake);
    c.on('error', () => {
      // Lost the connection: poll meanwhile and listen again shortly.
      client = null;
      setTimeout(() => void connect().catch(() => {}), 1000).unref();
    });
    try {
      await c.connect();
      await c.query(`listen ${WAKE_CHANNEL}`);
      client = c;
    } catch {
      setTimeout(() => void connect().catch(() => {}), 1000).unref();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    await client?.end().catch(() => {});
  };
}
