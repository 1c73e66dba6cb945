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
  /** contentType: the media type of the schema, application/json unless given (e.g. text/event-stream). */
  responses: Record<number, { description: string; schema?: AnySchema; contentType?: string; headers?: readonly AnswerHeader[] }>;
  /** A path outside the document's server prefix (e.g. /api/session). */
  serverUrl?: string;
}

/** The parts of a valibot schema or action the query-integer override reads. */
interface Node {
  type: string;
  pipe?: Node[];
  requirement?: unknown;
  description?: string;
}

function flatPipe(node: Node): Node[] {
  const [root, ...rest] = node.pipe ?? [node];
  const head = root && root !== node && root.pipe ? flatPipe(root) : root ? [root] : [];
  return [...head, ...rest.flatMap((item) => (item.pipe ? flatPipe(item) : [item]))];
}

/**
 * A query integer (schemas.ts queryInt: digits → transform → number → bounds) travels as a string,
 * so the input-type conversion would stop at the transform and drop the bounds and description.
 * Describe it by its value instead: `integer` with minimum, maximum and description.
 */
function queryInteger(node: Node): Json | undefined {
  if (node.type !== 'string' || !node.pipe) return undefined;
  const items = flatPipe(node);
  const t = items.findIndex((i) => i.type === 'transform');
  if (t < 0 || items[t + 1]?.type !== 'number') return undefined;
  const out: Json = { type: 'integer' };
  for (const item of items.slice(t + 2)) {
    if (item.type === 'min_value') out.minimum = item.requirement;
    if (item.type === 'max_value') out.maximum = item.requirement;
    if (item.type === 'description') out.description = item.description;
  }
  return out;
}

export const jsonSchema = (schema: AnySchema): Json =>
  toJsonSchema(schema, {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    typeMode: 'input',
    // The converter hands pipes to no override, so the optional around a query parameter is
    // where its pipe can be read (every query parameter is optional).
    overrideSchema: ({ valibotSchema }) => {
      const s = valibotSchema as unknown as Node & { wrapped?: Node; default?: unknown };
      const int = s.type === 'optional' && s.wrapped ? queryInteger(s.wrapped) : undefined;
      if (!int) return undefined;
      // optional(queryInt, '50'): the default is the wire string; document the number.
      return typeof s.default === 'string' ? { ...int, default: Number(s.default) } : int;
    },
  }) as Json;

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
        // The contract's fixed codes, with the status each one comes with (docs/decisions.md §4).
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

/** Headers of answers, as an OpenAPI response declares them (a generated client can read them). */
const ANSWER_HEADERS = {
  'X-Request-Id': { description: 'The request id (yours if you sent one): quote it when reporting a problem', schema: { type: 'string' } },
  'RateLimit-Limit': { description: "Requests a minute this credential may make", schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current minute', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
  ETag: { description: 'The revision as an ETag ("3"): send it back as If-Match to change what you read', schema: { type: 'string' } },
  Location: { description: 'The URL of what was created', schema: { type: 'string' } },
  'Idempotent-Replayed': { description: '"true" when this is the answer to an earlier create (the same Idempotency-Key, or the same externalId)', schema: { type: 'string', enum: ['true'] } },
  Allow: { description: 'The methods this path takes', schema: { type: 'string' } },
} as const;
export type AnswerHeader = keyof typeof ANSWER_HEADERS;

export class OpenApiDoc {
  private ops: OperationDoc[] = [];

  constructor(
    private readonly info: { title: string; version: string; description: string },
    /** Where the document's paths live (`/api/v2`); route templates in logs and metrics start with it. */
    readonly serverPath: string,
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
        const code = Number(status);
        // An error without a schema of its own is the error envelope, as every error is.
        const schema = r.schema ? jsonSchema(r.schema) : code >= 400 ? { $ref: '#/components/schemas/Error' } : undefined;
        // RateLimit-* once a credential was counted: not on a 401, which has none.
        const counted = op.security !== 'none' && code !== 401;
        const names: AnswerHeader[] = ['X-Request-Id', ...(counted ? (['RateLimit-Limit', 'RateLimit-Remaining'] as const) : []), ...(code === 429 || code === 503 ? (['Retry-After'] as const) : []), ...(r.headers ?? [])];
        responses[status] = {
          description: r.description,
          headers: Object.fromEntries(names.map((n) => [n, ANSWER_HEADERS[n]])) as Json,
          ...(schema ? { content: { [r.contentType ?? 'application/json']: { schema } } } : {}),
        };
      }
      responses.default = {
        description: 'Error envelope { error: { code, message } }; the codes and their statuses are listed in components.schemas.Error',
        headers: { 'X-Request-Id': ANSWER_HEADERS['X-Request-Id'], 'Retry-After': { ...ANSWER_HEADERS['Retry-After'], description: 'On a 429 or 503: seconds to wait before trying again' } } as Json,
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
