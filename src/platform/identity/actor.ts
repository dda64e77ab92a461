// Who is calling, once the request pipeline (http/pipeline.ts) has checked the credential: nobody, a
// signed-in person with a live session, or an organization's API key.
import type { UserRow } from '../../db/tables/users.js';

export type Actor =
  | { kind: 'anonymous' }
  // `user`: the account's row as the guard found it (active), for GET /users/me to reuse.
  | { kind: 'user'; userId: string; email: string; sessionId: string; user?: UserRow }
  | { kind: 'api_key'; keyId: string; organizationId: string; scopes: string[]; createdBy: string };

export type UserActor = Extract<Actor, { kind: 'user' }>;
