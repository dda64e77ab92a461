// Response serialization. A success body goes through fast-json-stringify compiled from the route's
// schema, so only the declared fields leave; each schema is compiled once per process and reused by
// every app built in it (the named schemas the routes refer to are module constants, the same for
// all). An error body is the envelope the error handler builds (error-handler.ts), written with
// JSON.stringify: the error statuses a route declares are there for its document (errors-doc.ts),
// about eight per route, and compiling a serializer for each cost two seconds of CPU at every start.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import type { TSchema } from 'typebox';

type Serializer = (data: unknown) => string;

const compiled = new WeakMap<object, Serializer>();
const stringifyError: Serializer = (data) => JSON.stringify(data);

/** The serializer compiler of an app whose named schemas are `shared`. */
export function createSerializerCompiler(shared: readonly TSchema[]): FastifySerializerCompiler<TSchema> {
  const compile = SerializerSelector()(Object.fromEntries(shared.map((s) => [(s as { $id: string }).$id, s])), {});
  return (route) => {
    if (/^[45]/.test(route.httpStatus ?? '')) return stringifyError;
    const schema = route.schema as object;
    let serializer = compiled.get(schema);
    if (!serializer) {
      serializer = compile({ ...route, httpStatus: route.httpStatus ?? '' }) as Serializer;
      compiled.set(schema, serializer);
    }
    return serializer;
  };
}
