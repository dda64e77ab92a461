// A route as data: what it answers to (method, url, aliases, the switch that turns it on), who may
// call it (`auth`), which rate limit counts it (`bucket`), its contract (schemas, the error codes its
// services throw, its documentation) and its handler. Features export lists of them; src/routes.ts
// spreads those lists into the route table, and mount.ts registers it (docs/architecture.md#routes).
// A declaration names its documentation (`doc: docs.listProjects`): the operationId, tags, summary,
// description and error examples live in the feature's docs.ts, keyed by operationId.
//
// The guard is declared once, here, and the pipeline enforces it before the handler runs: a handler
// receives the caller already checked (`ctx.user`, `ctx.access`) and never authorizes by hand.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { Config } from '../config.js';
import type { Actor, UserActor } from '../platform/identity/actor.js';
import type { Permission } from '../platform/permissions.js';
import type { OrgAccess, RequestContext } from '../platform/tenancy.js';
import type { ErrorSpec } from './errors-doc.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Where an organization route finds its organization: a path parameter's name, or a lookup from the
 * path's other parameters (the flat webhook paths find it from the endpoint; 404 when there is none)
 * or from the validated request (the flat create routes: a body field, or the API key's organization).
 */
export type OrgLocator = string | ((params: Record<string, string>, request: FastifyRequest) => Promise<string>);

/** An organization route: the caller needs `permission` there (a role's, or a key's through its scopes). */
export interface OrgGuard {
  org: OrgLocator;
  permission: Permission;
  /**
   * The guard's refusals as the document shows them, where the default (`orgAccessErrors`: an
   * unknown organization, a role lacking the permission) would mislead: a permission every member
   * holds is refused only to a non-member.
   */
  errors?: ErrorSpec[];
}

/**
 * Who may call a route:
 * - `none`: anyone; the credential is not checked (sign-in, mailed links, inbound Stripe events);
 * - `optional`: anyone, and a credential sent must be valid; `ctx.actor` says who it is;
 * - `optionalUser`: anyone without a credential, or a signed-in person (401 for a credential that is not
 *   valid, 403 for an API key); `ctx.user`, null without a credential (logout: a session, or none);
 * - `user`: a signed-in person (401 without, 403 for an API key); `ctx.user`;
 * - an `OrgGuard`: a member whose role grants the permission, or a key of the organization whose scopes
 *   reach it; 404 for an unknown organization, 403 otherwise; `ctx.access`.
 */
export type Guard = 'none' | 'optional' | 'optionalUser' | 'user' | OrgGuard;

/** Which rate limit counts a request: `auth`, the per-IP sign-in limit; else per key, user or IP. */
export type Bucket = 'auth' | 'caller';

export interface RouteSchemas {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  headers?: TSchema;
  /** The media types of the answers, where they are not JSON (an HTML page). */
  produces?: string[];
  /** The success answers; the error answers come from `errors` and the guard. */
  response: Record<number, TSchema>;
}

interface BaseCtx {
  request: FastifyRequest;
  reply: FastifyReply;
  /** Method, route, path, IP and user agent: what an audit entry records. */
  context: RequestContext;
}

/** What the handler of a route with guard G receives besides its input. */
export type Ctx<G extends Guard = Guard> = BaseCtx &
  (G extends 'user'
    ? { user: UserActor }
    : G extends 'optionalUser'
      ? { user: UserActor | null }
      : G extends OrgGuard
        ? { access: OrgAccess }
        : G extends 'optional'
          ? { actor: Actor }
          : unknown);

type StaticOr<T, Else> = T extends TSchema ? Static<T> : Else;

export interface Input<S extends RouteSchemas> {
  params: StaticOr<S['params'], Record<string, never>>;
  query: StaticOr<S['querystring'], Record<string, never>>;
  body: StaticOr<S['body'], undefined>;
}

type Success<S extends RouteSchemas> = {
  [K in keyof S['response']]: S['response'][K] extends TSchema ? Static<S['response'][K]> : never;
}[keyof S['response']];

/** The same operation under another path (the flat webhook paths): its own id, params and locator. */
export interface Alias {
  url: string;
  operationId: string;
  params?: TSchema;
  /** Where the alias finds the organization (an organization route's alias only). */
  org?: OrgLocator;
  /** Appended to the summary and the description. */
  summary?: string;
  description?: string;
  /** The alias's own summary, in place of the route's (`summary` is still appended). */
  ownSummary?: string;
}

/** A route as a feature declares it: its documentation is named (`doc: docs.<operationId>`), not inline. */
export interface RouteDeclaration<G extends Guard = Guard, S extends RouteSchemas = RouteSchemas> {
  method: Method;
  /** Under /api/v1. */
  url: string;
  auth: G;
  bucket?: Bucket;
  /** The route exists only when this says so (a sign-in method switched off answers 404). */
  enabled?: (config: Config) => boolean;
  aliases?: Alias[];
  /** The operation's documentation, from the feature's docs.ts. */
  doc: RouteDoc;
  schema: S;
  /** A missing body is `{}` (a bodiless POST), and the document says the body is optional. */
  optionalBody?: boolean;
  /**
   * Content types this route alone parses its own way, from the body as text, in place of the app's
   * parser of that type (the inbound Stripe route keeps the raw body its signature covers).
   */
  parsers?: Record<string, (body: string) => unknown>;
  /**
   * The answer: a value of a success schema, sent with the first success status (set
   * `ctx.reply.status` for another), or the reply itself once the handler has sent it.
   */
  handler: (ctx: Ctx<G>, input: Input<S>) => Promise<Success<S> | FastifyReply> | Success<S> | FastifyReply;
}

/** What the document says of an operation, besides its schemas: its prose and its error examples. */
export interface RouteDoc {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  /** The codes the handler and its services can answer; the guard's and the pipeline's are added. */
  errors?: ErrorSpec[];
}

/** A route of the table: its declaration with the documentation spread in (what mount.ts reads). */
export type Route<G extends Guard = Guard, S extends RouteSchemas = RouteSchemas> = Omit<
  RouteDeclaration<G, S>,
  'doc'
> &
  RouteDoc;

/** A route entry, typed from its own declaration (the guard and the schemas type the handler). */
export function route<const G extends Guard, const S extends RouteSchemas>({
  doc,
  ...r
}: RouteDeclaration<G, S>): Route {
  return { ...doc, ...r } as unknown as Route;
}

/**
 * A feature's docs.ts: the prose of its operations under `tags`, keyed by operationId, which each
 * entry takes from its key (`docs.listProjects.operationId === 'listProjects'`).
 */
export function routeDocs<D extends Record<string, Omit<RouteDoc, 'operationId' | 'tags'>>>(
  tags: string[],
  docs: D,
): { [K in keyof D]: RouteDoc } {
  const out: Record<string, RouteDoc> = {};
  for (const [operationId, doc] of Object.entries(docs)) out[operationId] = { operationId, tags, ...doc };
  return out as { [K in keyof D]: RouteDoc };
}

export const isOrgGuard = (g: Guard): g is OrgGuard => typeof g === 'object';
