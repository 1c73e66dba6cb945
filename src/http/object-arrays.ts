// valibot's object schemas accept arrays (an array is typeof "object"), so `[]` would pass as `{}`
// and `[1]` would be refused as "unknown field 0". This walks a schema next to the input and
// finds the first array sent where an object is expected, so the caller can name it.
import type * as v from 'valibot';

/** The parts of a valibot schema this walk reads (structural, so no valibot internals leak). */
interface SchemaNode {
  type: string;
  wrapped?: SchemaNode;
  entries?: Record<string, SchemaNode>;
  item?: SchemaNode;
  value?: SchemaNode;
}

const OBJECTS = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest', 'record']);

function walk(node: SchemaNode, input: unknown, path: string): string | undefined {
  let s = node;
  while (s.wrapped) s = s.wrapped; // optional, nullable, nullish, …
  if (OBJECTS.has(s.type)) {
    if (Array.isArray(input)) return path;
    if (input === null || typeof input !== 'object') return undefined;
    const obj = input as Record<string, unknown>;
    if (s.type === 'record') {
      for (const key of Object.keys(obj)) {
        const found = s.value && walk(s.value, obj[key], `${path}.${key}`);
        if (found) return found;
      }
      return undefined;
    }
    for (const [key, sub] of Object.entries(s.entries ?? {})) {
      if (!Object.hasOwn(obj, key)) continue;
      const found = walk(sub, obj[key], `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  if (s.type === 'array' && s.item && Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const found = walk(s.item, input[i], `${path}[${i}]`);
      if (found) return found;
    }
  }
  return undefined;
}

/** Where (e.g. "body.inputs") an array was sent in place of an object, or undefined. */
export function arrayInPlaceOfObject(where: string, schema: v.GenericSchema, input: unknown): string | undefined {
  return walk(schema as unknown as SchemaNode, input, where);
}
