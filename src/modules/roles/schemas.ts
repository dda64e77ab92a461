import { Type } from 'typebox';
import { Body, named, Nullable, ref } from '../../http/schemas.js';
import { ROLE_KEY_PATTERN as ROLE_KEY } from '../../platform/permissions.js';

const PermissionKey = Type.String({ minLength: 1, maxLength: 100 });
const Permissions = Type.Array(PermissionKey, {
  maxItems: 200,
  uniqueItems: true,
  description: 'Keys of the permission catalogue (GET /permissions)',
});

export const RoleParams = Type.Object({
  orgId: Type.String({ minLength: 1, maxLength: 64, description: 'The organization (`org_…`)' }),
  key: Type.String({ minLength: 1, maxLength: 64, description: "The role's key" }),
});

export const PermissionEntry = Type.Object({
  key: Type.String(),
  builtIn: Type.Boolean({ description: "false: one of the product's own (APP_PERMISSIONS)" }),
});
export const PermissionCatalogue = named(
  'PermissionCatalogue',
  Type.Object({ permissions: Type.Array(PermissionEntry) }),
  {
    description:
      'Every permission a role may grant: the built-in ones, then the product’s own (docs/api.md#the-permission-catalogue)',
    examples: [
      {
        permissions: [
          { key: 'org:read', builtIn: true },
          { key: 'invoices:approve', builtIn: false },
        ],
      },
    ],
  },
);

const BILLING = {
  key: 'billing-manager',
  name: 'Billing manager',
  description: 'Reads the organization and manages its subscription',
  permissions: ['org:read', 'billing:read', 'billing:manage', 'invoices:approve'],
  builtIn: false,
  memberCount: 2,
};

export const OrgRole = named(
  'Role',
  Type.Object({
    key: Type.String({ description: 'What memberships, invitations and tokens (`org_role`) name it by' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    permissions: Type.Array(Type.String(), { description: 'What it grants, in catalogue order' }),
    builtIn: Type.Boolean({ description: 'owner, admin, member and viewer: unchangeable' }),
    memberCount: Type.Integer({ description: 'Members holding it now' }),
  }),
  { description: 'A role of an organization (docs/api.md#custom-roles)', examples: [BILLING] },
);

export const RoleList = named('RoleList', Type.Object({ roles: Type.Array(ref(OrgRole)) }), {
  description: 'The four built-in roles, then the custom ones in the order they were made',
});

export const CreateRoleBody = named(
  'CreateRoleRequest',
  Body({
    key: Type.String({
      pattern: ROLE_KEY,
      description:
        '2-40 lowercase letters, digits and dashes, starting with a letter; not a built-in role; unique in the organization',
    }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    permissions: {
      ...Permissions,
      description: 'Catalogue keys other than org:delete and org:transfer, each one the caller holds',
    },
  }),
  {
    examples: [
      { key: BILLING.key, name: BILLING.name, description: BILLING.description, permissions: BILLING.permissions },
    ],
  },
);

export const PatchRoleBody = named(
  'UpdateRoleRequest',
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
      permissions: Type.Optional({
        ...Permissions,
        description:
          'Replaces the list: catalogue keys other than org:delete and org:transfer, each one the caller holds',
      }),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
  { examples: [{ permissions: ['org:read', 'billing:read'] }] },
);

export const PermissionCheckBody = named(
  'PermissionCheckRequest',
  Body({
    userId: Type.String({ minLength: 1, maxLength: 64, description: 'The person (`usr_…`)' }),
    permissions: Type.Array(PermissionKey, {
      minItems: 1,
      maxItems: 100,
      description: 'Keys of the permission catalogue',
    }),
  }),
  { examples: [{ userId: 'usr_01jq3bn9zs0a7awy2w2vc6bte1', permissions: ['billing:manage', 'invoices:approve'] }] },
);

export const PermissionCheck = named(
  'PermissionCheckResult',
  Type.Object({
    userId: Type.String(),
    role: Nullable(Type.String({ description: 'Their role key here, or null for a non-member' })),
    allowed: Type.Record(Type.String(), Type.Boolean(), {
      description: 'Each permission asked about: whether their role grants it',
    }),
  }),
  {
    examples: [
      {
        userId: 'usr_01jq3bn9zs0a7awy2w2vc6bte1',
        role: 'billing-manager',
        allowed: { 'billing:manage': true, 'invoices:approve': true },
      },
    ],
  },
);
