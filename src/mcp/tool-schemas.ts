// The MCP tools' arguments and results (docs/decisions.md §9) as valibot schemas: the same schemas check a
// call's arguments and become the JSON Schemas tools/list announces, as the HTTP routes' schemas
// become the OpenAPI document. The descriptions are written for an assistant deciding what to send.
import * as v from 'valibot';
import { RecordingSchema } from '../http/schemas/recordings';
import { Id } from '../http/schemas';
import { RECORDING_TYPES } from '../services/device-inputs';
import { Int, UnixMs } from '../http/schemas/numbers';

/** Page size bounds of the listing tools (smaller than the API's: results go into a model's context). */
export const MAX_TOOL_LIMIT = 50;
export const DEFAULT_TOOL_LIMIT = 10;

const Type = v.pipe(
  v.picklist(RECORDING_TYPES, 'must be "clip" or "memo"'),
  v.description('"clip" (a short voice capture from a wearable) or "memo" (a longer note); omit for both'),
);

const Limit = v.optional(
  v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(1, `must be 1-${MAX_TOOL_LIMIT}`),
    v.maxValue(MAX_TOOL_LIMIT, `must be 1-${MAX_TOOL_LIMIT}`),
    v.description(`How many recordings to return, 1-${MAX_TOOL_LIMIT} (default ${DEFAULT_TOOL_LIMIT})`),
  ),
  DEFAULT_TOOL_LIMIT,
);

const Cursor = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(1024, 'must be at most 1024 characters'),
  v.description('The nextCursor of the previous result, to get the following page; send the same other arguments again'),
);

const TIME_FORMS =
  'an ISO 8601 date (2026-05-01, taken as UTC) or date-time with a zone (2026-05-01T09:30:00Z, 2026-05-01T11:30+02:00), or Unix milliseconds';

const Time = (which: string) =>
  v.pipe(
    v.union([v.pipe(v.string(), v.minLength(1), v.maxLength(64)), v.pipe(v.number(), v.integer(), v.minValue(0))], `must be ${TIME_FORMS}`),
    v.description(`${which}: ${TIME_FORMS}`),
  );

export const SearchArgs = v.strictObject({
  query: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.check((q) => q.trim() !== '', 'must not be empty'),
    v.maxLength(200, 'must be at most 200 characters'),
    v.description(
      'Words to find in titles and transcripts. Every word must appear; a word also matches longer words it starts ' +
        '("meet" finds "meeting"); case and accents are ignored; "double quotes" make an exact phrase.',
    ),
  ),
  type: v.optional(Type),
  from: v.optional(Time('Earliest capture time, inclusive')),
  to: v.optional(Time('Latest capture time, inclusive (a date alone means the end of that day)')),
  limit: Limit,
  cursor: v.optional(Cursor),
});

export const ListArgs = v.strictObject({
  type: v.optional(Type),
  limit: Limit,
  cursor: v.optional(Cursor),
});

export const GetArgs = v.strictObject({
  id: v.pipe(Id, v.description('The recording id (rec_…), as returned by search_recordings or list_recordings')),
});

/** A note's text: well inside the 1.5 MB body of a POST, whatever its characters' UTF-8 length (JSON escapes aside). */
const NOTE_MAX_CHARS = 400_000;

export const CreateNoteArgs = v.strictObject({
  text: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.check((s) => s.trim() !== '', 'must not be empty'),
    // Announced in the schema, so an assistant knows before it sends: a POST to /mcp is at most
    // 1.5 MB (MAX_JSON_BYTES), and a bigger one is refused by HTTP (413), not as a tool result.
    v.maxLength(NOTE_MAX_CHARS, `must be at most ${NOTE_MAX_CHARS.toLocaleString('en-US')} characters`),
    v.description(`The note itself; stored as the transcript, so it is searchable at once. At most ${NOTE_MAX_CHARS.toLocaleString('en-US')} characters`),
  ),
  title: v.optional(v.pipe(v.string(), v.maxLength(1_000, 'must be at most 1,000 characters'), v.description('A short title; default none'))),
  type: v.optional(v.pipe(v.picklist(RECORDING_TYPES, 'must be "clip" or "memo"'), v.description('"memo" (default) or "clip"')), 'memo'),
});

const Listed = v.object({
  id: v.string(),
  type: v.picklist(RECORDING_TYPES),
  title: v.string(),
  recordedAt: v.pipe(UnixMs, v.description('Capture time, Unix milliseconds')),
  snippet: v.pipe(v.string(), v.description('A short excerpt of the transcript (around the first matched word for a search)')),
});

export const ListOutput = v.object({
  recordings: v.array(Listed),
  nextCursor: v.pipe(v.nullable(v.string()), v.description('Pass as cursor for the next page; null when there is none')),
});

export const RecordingOutput = v.object({ recording: RecordingSchema });

export const CreatedOutput = v.object({
  recording: v.union([
    RecordingSchema,
    v.pipe(v.object({ id: v.string(), revision: Int }), v.description('Only id and revision when the key lacks recordings:read')),
  ]),
});
