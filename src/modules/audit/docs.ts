// The OpenAPI prose of the audit log route (routes.ts), by operationId. The declaration names it
// (`doc: docs.listAuditLogs`).
import { routeDocs } from '../../http/route.js';

export const docs = routeDocs(['Audit log'], {
  listAuditLogs: {
    summary: 'Audit log, newest first (audit-logs:read; scope read:audit-logs)',
    description:
      'Owners and admins, or an API key with read:audit-logs. Holds every request made with a key of the organization (refused ones included) and every change a person made in it; filter by actor, action (exact) and time (docs/api.md#audit-log).',
  },
});
