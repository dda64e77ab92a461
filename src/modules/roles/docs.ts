// The OpenAPI prose of the role routes (routes.ts), by operationId: each operation's summary,
// description and the error examples its service answers. The declarations name them (`doc: docs.createRole`).
import { type ErrorExample, invalidBody, notFound } from '../../http/errors-doc.js';
import { MAX_CUSTOM_ROLES } from './service.js';
import { routeDocs } from '../../http/route.js';

const NOT_FOUND = notFound('Role not found');
const BUILT_IN: ErrorExample = {
  code: 'VALIDATION_ERROR',
  name: 'builtInRole',
  message: 'Built-in roles cannot be changed',
  details: 'key: admin is a built-in role',
};
const UNKNOWN_PERMISSION = invalidBody(
  'permissions: "invoices:aprove" is not in the permission catalogue (GET /permissions)',
  'unknownPermission',
);
const OWNER_ONLY = invalidBody(
  'permissions: org:delete belongs to the owner alone and cannot be granted by a role',
  'ownerOnly',
);
const CEILING: ErrorExample = {
  code: 'AUTHORIZATION_ERROR',
  name: 'beyondYourRole',
  message: 'You cannot grant billing:manage',
  details: 'A role can grant only permissions your own role holds',
};
const TAKEN: ErrorExample = {
  code: 'CONFLICT',
  name: 'keyTaken',
  message: 'A role with this key exists',
  details: 'key: billing-manager is taken in this organization',
};
const IN_USE: ErrorExample = {
  code: 'CONFLICT',
  name: 'roleInUse',
  message: 'The role is in use',
  details: 'key: billing-manager is held by 2 member(s) and 0 pending invitation(s); give them another role first',
};

export const docs = routeDocs(['Roles'], {
  listPermissions: {
    summary: 'The permission catalogue',
    description:
      'Every permission a role may grant: the built-in ones (`builtIn: true`), then the product’s own from `APP_PERMISSIONS`. Owners and admins hold every product permission, members and viewers none; a custom role holds what it lists.',
  },
  listRoles: {
    summary: "The organization's roles, with how many members hold each (members:read)",
    description:
      'Members, or an API key with read:members. The four built-in roles first (`builtIn: true`), then the custom roles in the order they were made.',
  },
  createRole: {
    summary: 'Make a custom role (roles:manage)',
    description: `A key of 2-40 lowercase letters, digits and dashes that is no built-in role and unique here (409), and catalogue permissions other than org:delete and org:transfer (400 naming the bad one), each held by the caller (403). At most ${MAX_CUSTOM_ROLES} per organization (409). Sends role.created; audited.`,
    errors: [UNKNOWN_PERMISSION, OWNER_ONLY, CEILING, TAKEN],
  },
  updateRole: {
    summary: 'Change a custom role (roles:manage)',
    description:
      'Any of `name`, `description` (null clears it) and `permissions` (replaces the list, under the rules of creation). Built-in roles: 400. A role that grants a permission the caller lacks cannot be changed by them (403). Its holders get the new permissions at once on every route, and in their tokens at the next refresh; taking api-keys:create away revokes the keys its holders made here. Sends role.updated; audited.',
    errors: [BUILT_IN, UNKNOWN_PERMISSION, OWNER_ONLY, CEILING, NOT_FOUND],
  },
  deleteRole: {
    summary: 'Delete a custom role (roles:manage); not while a member or a pending invitation holds it',
    description:
      'Built-in roles: 400. Held by a member or a pending invitation (an expired one included, since it can be renewed): 409. Sends role.deleted; audited.',
    errors: [BUILT_IN, CEILING, IN_USE, NOT_FOUND],
  },
  checkPermissions: {
    summary: "Whether a person's role here grants permissions (members:read)",
    description:
      'Members, or an API key with read:members: for a user id and catalogue permissions, their role and, for each permission, whether it grants it; a non-member gets `role: null` and every permission false. A permission outside the catalogue: 400. Read now, not from any token.',
    errors: [UNKNOWN_PERMISSION],
  },
});
