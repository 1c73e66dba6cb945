// The four MCP tools of docs/decisions.md §9. Each one calls the RecordingService exactly as the v2 routes
// do (same listing, same search, same create), so MCP adds no rule of its own beyond reading its
// arguments; failures the caller can fix come back as AppError and become isError results (tool-server.ts).
import type * as v from 'valibot';
import { invalid, notFound, AppError } from '../errors';
import { written } from '../http/v2/recordings';
import { randomBase62 } from '../ids';
import { can, type Permission, type Principal } from '../permissions';
import { recordingJson, type RecordingJson, type RecordingRow } from '../services/recording-model';
import type { Services } from '../services';
import { parseQuery } from '../services/search-plan';
import { snippet } from './snippet';
import { CreatedOutput, CreateNoteArgs, GetArgs, ListArgs, ListOutput, RecordingOutput, SearchArgs } from './tool-schemas';

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolContext {
  services: Services;
  principal: Principal;
}

export interface Tool<S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  title: string;
  description: string;
  permission: Permission;
  input: S;
  output: v.GenericSchema;
  readOnly: boolean;
  run(ctx: ToolContext, args: v.InferOutput<S>): ToolResult | Promise<ToolResult>;
}

const tool = <S extends v.GenericSchema>(t: Tool<S>): Tool => t as unknown as Tool;

/** "2026-05-01 09:30 UTC" */
const when = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 86_400_000;

/** A time argument in Unix ms; a date alone is its first millisecond (UTC), or its last for `to`. */
function timeArg(where: 'from' | 'to', value: string | number): number {
  if (typeof value === 'number') return value;
  const day = DATE_ONLY.exec(value);
  if (day) {
    const ms = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    if (new Date(ms).toISOString().slice(0, 10) === value) return where === 'to' ? ms + DAY_MS - 1 : ms;
  } else if (DATE_TIME.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms;
  }
  throw invalid(`arguments.${where}: "${value}" is not a date; use 2026-05-01, 2026-05-01T09:30:00Z or Unix milliseconds`);
}

function listed(rows: RecordingRow[], nextCursor: string | null, query: string | undefined) {
  return {
    recordings: rows.map((r) => ({ id: r.id, type: r.type, title: r.title, recordedAt: r.recorded_at, snippet: snippet(r.transcript, query) })),
    nextCursor,
  };
}

function listingText(page: ReturnType<typeof listed>, heading: string, empty: string): string {
  if (page.recordings.length === 0) return empty;
  const lines = [heading];
  page.recordings.forEach((r, i) => {
    lines.push(`${i + 1}. ${r.title === '' ? '(untitled)' : r.title} — ${r.type}, ${when(r.recordedAt)}, id ${r.id}`);
    if (r.snippet !== '') lines.push(`   ${r.snippet}`);
  });
  if (page.nextCursor !== null) lines.push(`More results: call again with cursor "${page.nextCursor}".`);
  return lines.join('\n');
}

function recordingText(r: RecordingJson): string {
  const facts = [r.type, `recorded ${when(r.recordedAt)}`, `id ${r.id}`, `status ${r.status}`, `revision ${r.revision}`];
  if (r.pinned) facts.push('pinned');
  const lines = [`${r.title === '' ? '(untitled)' : r.title} (${facts.join(', ')})`];
  if (r.summary !== '') lines.push('', `Summary: ${r.summary}`);
  lines.push('', r.transcript === '' ? '(no transcript yet)' : `Transcript:\n${r.transcript}`);
  return lines.join('\n');
}

const result = (text: string, structuredContent: Record<string, unknown>): ToolResult => ({ content: [{ type: 'text', text }], structuredContent });

/** A listing whose refused cursor is named as the assistant knows it, not by the HTTP route it shares. */
function mcpCursor<T>(list: () => T): T {
  try {
    return list();
  } catch (e) {
    if (e instanceof AppError && e.message.startsWith('cursor: not a cursor')) {
      throw invalid('arguments.cursor: not a nextCursor returned by this tool with the same arguments (query, type, from, to)');
    }
    throw e;
  }
}

export const TOOLS: readonly Tool[] = [
  tool({
    name: 'search_recordings',
    title: 'Search recordings',
    description:
      "Full-text search of the user's recordings (voice clips and memos) by words in their titles and transcripts, newest first. " +
      'Returns id, type, title, capture time and a snippet per match; use get_recording for the full transcript.',
    permission: 'recordings:read',
    input: SearchArgs,
    output: ListOutput,
    readOnly: true,
    run({ services, principal }, a) {
      const from = a.from === undefined ? undefined : timeArg('from', a.from);
      const to = a.to === undefined ? undefined : timeArg('to', a.to);
      if (from !== undefined && to !== undefined && from > to) throw invalid('arguments.from: must not be after arguments.to');
      // The HTTP API lists everything for a q without words (each of its none matches); an
      // assistant asked to search would read that as every recording matching.
      if (parseQuery(a.query).length === 0) {
        throw invalid(`arguments.query: ${JSON.stringify(a.query)} has no words to search for (letters or numbers); use list_recordings to browse`);
      }
      const { rows, nextCursor } = mcpCursor(() => services.recordings.list(principal, { q: a.query, type: a.type, from, to, limit: a.limit, cursor: a.cursor }));
      const page = listed(rows, nextCursor, a.query);
      return result(listingText(page, `Recordings matching "${a.query}", newest first:`, `No recordings match "${a.query}".`), page);
    },
  }),
  tool({
    name: 'list_recordings',
    title: 'List recent recordings',
    description: "The user's most recent recordings, newest first by capture time, with a snippet of each; page on with cursor.",
    permission: 'recordings:read',
    input: ListArgs,
    output: ListOutput,
    readOnly: true,
    run({ services, principal }, a) {
      const { rows, nextCursor } = mcpCursor(() => services.recordings.list(principal, { type: a.type, limit: a.limit, cursor: a.cursor }));
      const page = listed(rows, nextCursor, undefined);
      return result(listingText(page, 'Recordings, newest first:', 'There are no recordings.'), page);
    },
  }),
  tool({
    name: 'get_recording',
    title: 'Read a recording',
    description: 'One recording in full: title, transcript, summary, capture time, status, pinned.',
    permission: 'recordings:read',
    input: GetArgs,
    output: RecordingOutput,
    readOnly: true,
    run({ services, principal }, a) {
      let row: RecordingRow;
      try {
        row = services.recordings.get(principal, a.id);
      } catch (e) {
        // The service's 404 does not repeat the id; the assistant needs to see which one failed.
        if (e instanceof AppError && e.code === 'not_found') throw notFound(`recording ${a.id}`);
        throw e;
      }
      const recording = recordingJson(row);
      return result(recordingText(recording), { recording });
    },
  }),
  tool({
    name: 'create_note',
    title: 'Save a note',
    description:
      "Saves a text note in the user's library as a new recording (a memo by default), searchable at once. " +
      'It is stored as an import: capture rules (webhooks for device captures) do not fire for it.',
    permission: 'recordings:create',
    input: CreateNoteArgs,
    output: CreatedOutput,
    readOnly: false,
    async run({ services, principal }, a) {
      // An import as an API client makes it (no capture metadata, so never a native capture). The
      // service requires an idempotency key; a tool call has none of its own, so each call is new.
      const { row } = await services.recordings.createGrouped(
        principal,
        { type: a.type, title: a.title, transcript: a.text },
        `mcp_${randomBase62(24)}`,
      );
      const out = written(principal, row);
      const text = can(principal, 'recordings:read')
        ? `Saved.\n\n${recordingText(recordingJson(row))}`
        : `Saved as ${row.type} ${row.id} (revision ${row.revision}). This credential lacks recordings:read, so only the id is shown.`;
      return result(text, out);
    },
  }),
];
