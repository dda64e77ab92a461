// Recording an event is part of the business transaction (DECISIONS §5): the caller passes its tx.
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { events } from './tables.js';

export async function recordEvent(deps: Deps, tx: Tx, organizationId: string, type: string, data: Record<string, unknown>): Promise<string> {
  const now = deps.clock.now();
  const id = newId('evt', now.getTime());
  await tx.insert(events).values({ organizationId, id, type, data, createdAt: now });
  return id;
}
