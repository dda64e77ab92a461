// Migration 0012 revokes, once, the keys that earlier versions left alive after their maker was
// removed or demoted. Its SQL is run here on a database holding such keys (made as the old code
// left them: the membership changed directly, with no revocation), beside keys that must stay.
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { addMember, createApiKey, createOrg, keyState, setPlan, signedInUser } from '../../../test/factories.js';
import { t, useApp } from '../../../test/fixtures/app.js';

useApp();

it('revokes the live keys whose maker is no longer owner or admin, and no other', async () => {
  const owner = await signedInUser(t, 'orphan-owner');
  const [demoted, removed, admin] = [
    await signedInUser(t, 'orphan-demoted'),
    await signedInUser(t, 'orphan-removed'),
    await signedInUser(t, 'orphan-admin'),
  ];
  const org = (await createOrg(t, owner)).id;
  await setPlan(t, org, 'pro');
  const members = {
    demoted: await addMember(t, org, owner, demoted, 'admin'),
    removed: await addMember(t, org, owner, removed, 'admin'),
  };
  await addMember(t, org, owner, admin, 'admin');
  const keys = {
    owner: await createApiKey(t, org, owner, ['read:projects']),
    admin: await createApiKey(t, org, admin, ['read:projects']),
    demoted: await createApiKey(t, org, demoted, ['read:projects']),
    removed: await createApiKey(t, org, removed, ['read:projects']),
  };
  // What the old code left: the membership changed, the keys untouched.
  await t.deps.db.execute(sql`update memberships set role = 'member' where id = ${members.demoted.id}`);
  await t.deps.db.execute(sql`delete from memberships where id = ${members.removed.id}`);

  const migration = fs.readFileSync(new URL('../../../drizzle/0012_revoke_orphaned_keys.sql', import.meta.url), 'utf8');
  await t.deps.db.execute(sql.raw(migration));

  expect(await keyState(t, keys.owner.id)).toEqual({ isActive: true, revokedAt: null });
  expect(await keyState(t, keys.admin.id)).toEqual({ isActive: true, revokedAt: null });
  expect(await keyState(t, keys.demoted.id)).toMatchObject({ isActive: false, revokedAt: expect.any(String) });
  expect(await keyState(t, keys.removed.id)).toMatchObject({ isActive: false, revokedAt: expect.any(String) });
});
