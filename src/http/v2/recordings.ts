// v2 /recordings: create, read, edit, delete and search (docs/decisions.md §14,
// §5). The rules live in RecordingService; this file only maps HTTP to it. Writes use the
// grouped variants: concurrent requests share one commit (src/db/writer.ts).
import * as v from 'valibot';
import { invalid } from '../../errors';
import { can, type Principal } from '../../permissions';
import { RECORDING_TYPES } from '../../services/device-inputs';
import { MAX_AUDIO_REFS } from '../../services/recording-input';
import { MAX_RECORDED_AT, RECORDING_STATUSES, recordingJson, recordingRef, type RecordingRow } from '../../services/recording-model';
import { MAX_IDEMPOTENCY_KEY } from '../../services/recordings';
import type { HttpDeps } from '../env';
import { etag } from '../if-match';
import { recordingsPage } from '../page-answer';
import { jsonAnswer, jsonTextAnswer, type ApiRouter } from '../router';
import { Id, IdParams, queryInt, RecordedAt, RecordingsLimit, RecordingsNextCursor } from '../schemas';
import { RecordingSchema } from '../schemas/recordings';
import { writeRefusal } from '../node-request';
import { idempotencyKey, ifMatchFor } from '../request-headers';
import { runWrite } from '../write-calls';
import { Int } from '../schemas/numbers';

const RECORDED_AT_RULE = `Capture time in Unix milliseconds, a whole number from 0 to ${MAX_RECORDED_AT} (year 2248; the bound keeps the listing sort key exact)`;

const RecordingResponse = v.object({
  recording: v.union([RecordingSchema, v.pipe(v.object({ id: v.string(), revision: Int }), v.description('Callers without recordings:read'))]),
});

const AudioRefSchema = v.strictObject({ clientId: Id, fileId: Id });

export const CreateBody = v.strictObject({
  type: v.picklist(RECORDING_TYPES, 'must be "clip" or "memo"'),
  title: v.optional(v.string()),
  transcript: v.optional(v.pipe(v.string(), v.description('A nonempty transcript makes the status "ready" (else "pending")'))),
  summary: v.optional(v.string()),
  recordedAt: v.optional(v.pipe(RecordedAt, v.description(`${RECORDED_AT_RULE}. Default: now.`))),
  externalId: v.optional(v.pipe(Id, v.description('Your own id for an import; a repeat with the same externalId and body returns the same recording'))),
  audio: v.optional(
    v.pipe(
      v.array(AudioRefSchema),
      v.maxLength(MAX_AUDIO_REFS, `must list at most ${MAX_AUDIO_REFS} references`),
      v.description('Memo only: opaque local-file references { clientId, fileId } (no paths, URLs or bytes)'),
    ),
  ),
});

const Fixed = v.optional(v.pipe(v.unknown(), v.description('Fixed after creation: sending it gives 409 immutable_field')));
const PatchBody = v.strictObject({
  title: v.optional(v.string()),
  transcript: v.optional(v.string()),
  summary: v.optional(v.string()),
  pinned: v.optional(v.boolean()),
  type: Fixed,
  audio: Fixed,
  recordedAt: Fixed,
  externalId: Fixed,
  deviceId: Fixed,
});

const ListQuery = v.strictObject({
  type: v.optional(v.picklist(RECORDING_TYPES, 'must be "clip" or "memo"')),
  q: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(200, 'must be at most 200 characters'),
      v.description(
        'Words that must all appear in the title or transcript; each word also matches longer words it starts ' +
          '("meet" finds "meeting"), case- and accent-insensitively; "double quotes" make an exact phrase; ' +
          'a one-character word matches only itself; other punctuation is ignored.',
      ),
    ),
  ),
  deviceId: v.optional(Id),
  status: v.optional(v.picklist(RECORDING_STATUSES, `must be one of ${RECORDING_STATUSES.join(', ')}`)),
  from: v.optional(v.pipe(queryInt(0, Number.MAX_SAFE_INTEGER), v.description('Earliest capture time, Unix ms, inclusive'))),
  to: v.optional(v.pipe(queryInt(0, Number.MAX_SAFE_INTEGER), v.description('Latest capture time, Unix ms, inclusive'))),
  limit: RecordingsLimit,
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(1024, 'must be at most 1024 characters'),
      v.description('nextCursor of the previous page; valid only with the same filters'),
    ),
  ),
});
const ListResponse = v.object({
  recordings: v.array(RecordingSchema),
  nextCursor: RecordingsNextCursor,
});

const IF_MATCH = { name: 'If-Match', required: true, description: 'The ETag of your last read ("3", W/"3" or 3). Missing: 428; stale: 412.' };

/** The full recording for readers; only id and revision for write-only callers (docs/decisions.md §13). Also the MCP create_note answer. */
export const written = (principal: Principal, row: RecordingRow) => ({
  recording: can(principal, 'recordings:read') ? recordingJson(row) : recordingRef(row),
});

/** A create's headers after the rate limit's, in the route's order (the direct route writes the same). */
export function createdHeaders(row: RecordingRow, replayed: boolean): Record<string, string> {
  const headers: Record<string, string> = { etag: etag(row.revision), location: `/api/v2/recordings/${row.id}` };
  if (replayed) headers['idempotent-replayed'] = 'true';
  return headers;
}

export function registerRecordings(r: ApiRouter, deps: HttpDeps): void {
  const { recordings } = deps.services;
  r.add(
    {
      method: 'post', path: '/recordings', operationId: 'createRecording', tag: 'recordings', access: { permission: 'recordings:create' },
      summary: 'Create a recording (idempotent per Idempotency-Key and per externalId)',
      body: CreateBody,
      headers: [
        {
          name: 'Idempotency-Key', required: true,
          description: `1-${MAX_IDEMPOTENCY_KEY} characters, scoped to your key's integration identity and kept as long as the recording. ` +
            'The same key and body again returns the recording as it is now (200, Idempotent-Replayed: true); ' +
            'another body gives 409 idempotency_conflict; a deleted recording gives 410.',
        },
      ],
      responses: {
        201: { description: 'Created; Location and ETag headers', schema: RecordingResponse, headers: ['Location', 'ETag'] },
        200: { description: 'Replay of an earlier create (header Idempotent-Replayed: true)', schema: RecordingResponse, headers: ['Idempotent-Replayed', 'Location', 'ETag'] },
        409: { description: 'idempotency_conflict: this key or externalId was used with another body; limit_reached: 1,024 recordings share this recordedAt millisecond' },
        410: { description: 'The recording this key or externalId created was deleted' },
      },
      directAnswer: true,
      writerCall: true,
    },
    async (c, { body, principal }) => {
      const key = idempotencyKey(c, MAX_IDEMPOTENCY_KEY, 'new recording');
      // Run and refused already by the node server's direct route (direct-routes.ts): its error.
      const refused = writeRefusal(c);
      if (refused) throw refused.error;
      const { row, replayed } = await runWrite(deps.services, deps.writes, 'createRecording', principal, body, key);
      return jsonAnswer(c, written(principal, row), createdHeaders(row, replayed), replayed ? 200 : 201);
    },
  );
  r.add(
    {
      method: 'get', path: '/recordings/{id}', operationId: 'getRecording', tag: 'recordings', access: { permission: 'recordings:read' },
      summary: 'Read a recording; the ETag header is its revision',
      params: IdParams,
      responses: { 200: { description: 'The recording', schema: v.object({ recording: RecordingSchema }), headers: ['ETag'] }, 404: { description: 'Not found' }, 410: { description: 'Deleted' } },
      directAnswer: true,
    },
    (c, { params, principal }) => {
      const answer = recordings.answer(principal, params.id);
      return jsonTextAnswer(c, answer.body, { etag: etag(answer.revision) });
    },
  );
  r.add(
    {
      method: 'patch', path: '/recordings/{id}', operationId: 'updateRecording', tag: 'recordings', access: { permission: 'recordings:write' },
      summary: 'Edit title, transcript, summary or pinned; send only the fields to change',
      params: IdParams,
      body: PatchBody,
      headers: [IF_MATCH],
      responses: {
        200: { description: 'The recording after the edit (an edit that changes nothing keeps the revision)', schema: RecordingResponse, headers: ['ETag'] },
        409: { description: 'immutable_field (type, audio, recordedAt, externalId, deviceId) or not_editable (a capture the app has not saved yet)' },
        410: { description: 'Deleted' },
        412: { description: 'Stale If-Match: read again' },
        428: { description: 'If-Match missing' },
      },
    },
    async (c, { params, body, principal }) => {
      const expected = ifMatchFor(c, () => recordings.get(principal, params.id));
      const row = await recordings.updateGrouped(principal, params.id, body, expected);
      c.header('ETag', etag(row.revision));
      return c.json(written(principal, row));
    },
  );
  r.add(
    {
      method: 'delete', path: '/recordings/{id}', operationId: 'deleteRecording', tag: 'recordings', access: { permission: 'recordings:delete' },
      summary: 'Delete a recording: its text leaves the database and the search index; later access answers 410',
      params: IdParams,
      headers: [IF_MATCH],
      responses: { 204: { description: 'Deleted' }, 410: { description: 'Already deleted' }, 412: { description: 'Stale If-Match' }, 428: { description: 'If-Match missing' } },
    },
    async (c, { params, principal }) => {
      const expected = ifMatchFor(c, () => recordings.get(principal, params.id));
      await recordings.removeGrouped(principal, params.id, expected);
      return c.body(null, 204);
    },
  );
  r.add(
    {
      method: 'get', path: '/recordings', operationId: 'listRecordings', tag: 'recordings', access: { permission: 'recordings:read' },
      summary: 'Search and page the library, newest first by capture time (ties: newest created first)',
      query: ListQuery,
      responses: { 200: { description: 'One page', schema: ListResponse } },
      directAnswer: true,
    },
    (c, { query, principal }) => {
      if (query.from !== undefined && query.to !== undefined && query.from > query.to) throw invalid('query.from: must not be after query.to');
      return recordingsPage(c, recordings.listLazily(principal, query), recordingJson);
    },
  );
}
