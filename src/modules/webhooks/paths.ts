// The path parameters of the endpoint routes, and their flat aliases (docs/api.md#flat-webhook-paths):
// every route under /organizations/{orgId}/webhooks/{id} also answers under /webhooks/{id}, where the
// organization is the endpoint's. The alias's guard looks the endpoint up first, so an unknown or
// deleted endpoint answers 404 before any access check, and the permission is the route's own.
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import type { Alias } from '../../http/route.js';
import { Id } from './schemas.js';
import { organizationOfEndpoint } from './service.js';

const orgId = { ...Id, description: 'The organization (`org_…`)' };
const id = { ...Id, description: 'The endpoint (`wh_…`)' };
const deliveryId = { ...Id, description: 'The delivery (`dlv_…`)' };

export const OrgParams = Type.Object({ orgId });
export const OrgHookParams = Type.Object({ orgId, id });
export const OrgDeliveryParams = Type.Object({ orgId, id, deliveryId });
const HookParams = Type.Object({ id });
const DeliveryParams = Type.Object({ id, deliveryId });

const SUMMARY = ' (alias of the organization path)';
const NOTE =
  ' The organization is found from the endpoint: an unknown id answers 404 (docs/api.md#flat-webhook-paths).';

/** The flat alias of an endpoint route: its url under /webhooks/:id and its own operationId; its params are the url's. */
export type FlatAlias = (url: string, operationId: string) => Alias;

export function flatAlias(deps: Pick<Infra, 'db'>): FlatAlias {
  const org = (params: Record<string, string>) => organizationOfEndpoint(deps, params.id!);
  return (url, operationId) => ({
    url,
    operationId,
    params: url.includes(':deliveryId') ? DeliveryParams : HookParams,
    org,
    summary: SUMMARY,
    description: NOTE,
  });
}
