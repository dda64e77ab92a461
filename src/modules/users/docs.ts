// The OpenAPI prose of the signed-in person's routes (routes.ts), by operationId: each operation's
// summary, description and the error examples its services answer. The declarations name them (`doc: docs.getMe`).
import { invalidBody, notFound } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

const USER_NOT_FOUND = notFound('User not found');

export const docs = {
  ...routeDocs(['Users'], {
    getMe: {
      summary: 'The signed-in user',
      description: 'The person the access token belongs to (docs/api.md#user-resource). API keys get 403.',
      errors: [USER_NOT_FOUND],
    },
    updateMe: {
      summary: 'Update the profile; preferences are merged',
      description:
        'Any of `fullName`, `avatarUrl` (null removes it) and `preferences`, merged one level deep into `notifications`; `timezone` must be an IANA zone name. Answers the whole updated user (docs/api.md#profile).',
      errors: [invalidBody('preferences.timezone: must be an IANA time zone such as Europe/Paris'), USER_NOT_FOUND],
    },
    exportMe: {
      summary: 'Everything the service holds about you, as one JSON document',
      description:
        'The profile, sessions (revoked ones too), memberships, social links, passkeys and the audit entries of your changes, without any secret: no password hash, two-factor secret, backup code, token or key material (docs/api.md#account-export).',
      errors: [USER_NOT_FOUND],
    },
  }),
  ...routeDocs(['Sessions'], {
    listSessions: {
      summary: 'Active sessions, most recently used first',
      description:
        'Sessions neither revoked nor expired; `isCurrent` marks the one making the request. `lastUsedAt` may lag by up to 15 seconds (docs/api.md#session-management).',
    },
    revokeSession: {
      summary: 'Revoke one of your other sessions',
      description:
        'Its tokens stop working at once, on every instance. The current session cannot be revoked this way (400: use POST /auth/logout); a session that is not one of your active ones answers 404.',
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'The current session cannot be revoked this way',
          details: 'sessionId: is the current session; use POST /auth/logout',
        },
        notFound('Session not found'),
      ],
    },
    revokeAllSessions: {
      summary: 'Revoke every session, the current one included',
      description:
        'Ends every session of the caller, the current one included; `revoked` is how many were active. With `X-Session-Mode: cookie` the answer also removes the web app’s `tenantry_refresh` cookie (docs/api.md#session-management).',
    },
  }),
};
