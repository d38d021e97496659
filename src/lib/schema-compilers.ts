// Fastify's schema controller with the app's own compilers (Zod's) from the start. Set after the instance is made
// (setValidatorCompiler), they replace compilers Fastify has already loaded: Ajv and fast-json-stringify, which no
// route here uses and which cost a tenth of a second of every start.
import type { FastifySchemaCompiler, FastifySerializerCompiler, FastifyServerOptions } from "fastify";

export function schemaCompilers<S>(
  validator: FastifySchemaCompiler<S>,
  serializer: FastifySerializerCompiler<S>,
): FastifyServerOptions["schemaController"] {
  // Fastify types its factories after Ajv's compilers; it calls what they return exactly as it calls a compiler
  // given to setValidatorCompiler / setSerializerCompiler (with the route's schema definition).
  return {
    compilersFactory: { buildValidator: () => validator, buildSerializer: () => serializer },
  } as unknown as FastifyServerOptions["schemaController"];
}
