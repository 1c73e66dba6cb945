// The OpenAPI documents are built from the same valibot schemas that validate requests:
// ApiRouter.add() records every operation here as it registers the handler, so a route cannot
// exist without being described.
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { errorStatus } from '../errors';

type AnySchema = v.GenericSchema;
type Json = Record<string, unknown>;

export interface OperationDoc {
  method: string;
  path: string; // OpenAPI style: /recordings/{id}
  operationId: string;
  summary: string;
  tags: string[];
  security: 'bearer' | 'session' | 'none';
  permission?: string;
  params?: AnySchema;
  query?: AnySchema;
  body?: AnySchema;
  headers?: Array<{ name: string; required: boolean; description: string }>;
  responses: Record<number, { description: string; schema?: AnySchema }>;
  /** A path outside the document's server prefix (e.g. /api/session). */
  serverUrl?: string;
}

export const jsonSchema = (schema: AnySchema): Json =>
  toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore', typeMode: 'input' }) as Json;

function parameters(where: 'path' | 'query', schema: AnySchema | undefined): Json[] {
  if (!schema) return [];
  const js = jsonSchema(schema);
  const props = (js.properties ?? {}) as Record<string, Json>;
  const required = new Set((js.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
  }));
}

const errorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        // The contract's fixed codes, with the status each one comes with (CONTRACT §4).
        code: {
          type: 'string',
          enum: Object.keys(errorStatus),
          description: `One of: ${Object.entries(errorStatus).map(([code, status]) => `${code} (${status})`).join(', ')}`,
        },
        message: { type: 'string', description: 'Says which field or header is wrong' },
      },
    },
  },
};

export class OpenApiDoc {
  private ops: OperationDoc[] = [];

  constructor(
    private readonly info: { title: string; version: string; description: string },
    private readonly serverPath: string,
  ) {}

  add(op: OperationDoc): void {
    this.ops.push(op);
  }

  operations(): readonly OperationDoc[] {
    return this.ops;
  }

  toJSON(): Json {
    const paths: Record<string, Record<string, Json>> = {};
    for (const op of this.ops) {
      const responses: Record<string, Json> = {};
      for (const [status, r] of Object.entries(op.responses)) {
        responses[status] = {
          description: r.description,
          ...(r.schema ? { content: { 'application/json': { schema: jsonSchema(r.schema) } } } : {}),
        };
      }
      responses.default = {
        description: 'Error envelope { error: { code, message } }; the codes and their statuses are listed in components.schemas.Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
      const headerParams = (op.headers ?? []).map((h) => ({
        name: h.name,
        in: 'header',
        required: h.required,
        description: h.description,
        schema: { type: 'string' },
      }));
      const item = (paths[op.path] ??= {});
      if (op.serverUrl) item.servers = [{ url: op.serverUrl }] as unknown as Json;
      item[op.method] = {
        operationId: op.operationId,
        summary: op.summary,
        tags: op.tags,
        ...(op.permission ? { description: `Permission: \`${op.permission}\`.` } : {}),
        security:
          op.security === 'none' ? [] : op.security === 'session' ? [{ session: [] }, { sessionCookie: [] }] : [{ bearer: [] }, { sessionCookie: [] }],
        parameters: [...parameters('path', op.params), ...parameters('query', op.query), ...headerParams],
        ...(op.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.body) } } } }
          : {}),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: this.info,
      servers: [{ url: this.serverPath }],
      paths,
      components: {
        schemas: { Error: errorEnvelope },
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API key (rlk_…) or session token (rls_…)' },
          session: { type: 'http', scheme: 'bearer', description: 'Session token (rls_…) only; API keys are refused' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'reclib_session' },
        },
      },
    };
  }
}
