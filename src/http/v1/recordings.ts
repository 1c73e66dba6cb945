// v1 recording operations (spec "v1", docs/decisions.md §7): listRecordings, createRecording, latestClip,
// getRecording, updateRecording (PUT), deleteRecording. Every success is 200. The rules live in
// RecordingService, shared with v2, so a write here is a v2 write too (reads, feed, webhooks).
import * as v from 'valibot';
import { invalid } from '../../errors';
import type { CreateInput } from '../../services/recording-input';
import type { HttpDeps } from '../env';
import { etag } from '../if-match';
import { recordingsPage } from '../page-answer';
import type { ApiRouter } from '../router';
import { IdParams, RecordingsNextCursor } from '../schemas';
import { CreateV1Body, LatestClipQuery, ListV1Query, PutV1Body, V1_IDEMPOTENCY_MAX, type ListV1 } from './recordings-input';
import { RecordingV1Response, RecordingV1Schema, recordingV1Json, writtenV1 } from './recordings-shape';
import { idempotencyKey, ifMatch, ifMatchFor } from '../request-headers';
import { runWrite } from '../write-calls';
import { Int } from '../schemas/numbers';

const IF_MATCH = { name: 'If-Match', required: true, description: 'The ETag (revision) of your last read: "3", W/"3" or 3. Missing: 428; stale: 412.' };

/** v1 filters → the shared listing input; an empty q or cursor means none (v1 allows 0 chars). */
function listInput(q: Omit<ListV1, 'limit'>, limit: number) {
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) throw invalid('query.from: must not be after query.to');
  return {
    type: q.kind,
    q: q.q === '' ? undefined : q.q,
    deviceId: q.deviceId,
    status: q.status,
    source: q.source,
    from: q.from,
    to: q.to,
    cursor: q.cursor === '' ? undefined : q.cursor,
    limit,
  };
}

export function registerRecordingsV1(r: ApiRouter, deps: HttpDeps): void {
  const { recordings } = deps.services;
  r.add(
    {
      method: 'get', path: '/recordings', operationId: 'listRecordings', tag: 'recordings', access: { permission: 'recordings:read' },
      summary: 'Search and page the library, newest first by capture time (pending captures included)',
      query: ListV1Query,
      responses: { 200: { description: 'One page', schema: v.object({ recordings: v.array(RecordingV1Schema), nextCursor: RecordingsNextCursor }) } },
      directAnswer: true,
    },
    (c, { query, principal }) => {
      return recordingsPage(c, recordings.listLazily(principal, listInput(query, query.limit)), recordingV1Json);
    },
  );
  r.add(
    {
      method: 'post', path: '/recordings', operationId: 'createRecording', tag: 'recordings', access: { permission: 'recordings:create' },
      summary:
        'Create or import a recording. A session create with deviceId or captureInput is an app capture (native); without a transcript it is a ' +
        'metadata-only pending capture: no recording.created until the app saves its text, and only the app may edit it until then. ' +
        'With captureInput, the input mapping decides the kind',
      body: CreateV1Body,
      headers: [
        {
          name: 'Idempotency-Key', required: true,
          description: `1-${V1_IDEMPOTENCY_MAX} characters, scoped to the caller's integration identity. The same key and body again returns ` +
            'the recording as it is now (header Idempotent-Replayed: true); another body gives 409 idempotency_conflict; a deleted recording 410.',
        },
      ],
      responses: {
        200: { description: 'Created, or the replay of an earlier create (ETag and Location headers)', schema: RecordingV1Response, headers: ['ETag', 'Location', 'Idempotent-Replayed'] },
        404: { description: 'captureInput with an unknown deviceId' },
        409: { description: 'idempotency_conflict' },
        410: { description: 'The recording this key or externalId created was deleted' },
      },
      writerCall: true,
    },
    async (c, { body, principal }) => {
      const { kind, ...rest } = body;
      const input: CreateInput = { ...rest, type: kind };
      // With captureInput from a session, the input mapping decides the type (RecordingService).
      const { row, replayed } = await runWrite(deps.services, deps.writes, 'createRecording', principal, input, idempotencyKey(c, V1_IDEMPOTENCY_MAX, 'new recording'));
      c.header('ETag', etag(row.revision));
      c.header('Location', `/api/v1/recordings/${row.id}`);
      if (replayed) c.header('Idempotent-Replayed', 'true');
      return c.json(writtenV1(principal, row));
    },
  );
  // Registered before /recordings/{id}, which would otherwise take "latest-clip" as an id.
  r.add(
    {
      method: 'get', path: '/recordings/latest-clip', operationId: 'latestClip', tag: 'recordings', access: { permission: 'recordings:read' },
      summary: 'The newest clip by capture time, pending and processing captures included; { recording: null } when there is none',
      query: LatestClipQuery,
      responses: { 200: { description: 'The newest matching clip, or null', schema: v.object({ recording: v.nullable(RecordingV1Schema) }) } },
    },
    (c, { query, principal }) => {
      const { rows } = recordings.list(principal, { ...listInput(query, 1), type: 'clip' });
      return c.json({ recording: rows[0] ? recordingV1Json(rows[0]) : null });
    },
  );
  r.add(
    {
      method: 'get', path: '/recordings/{id}', operationId: 'getRecording', tag: 'recordings', access: { permission: 'recordings:read' },
      summary: 'Read a recording with its processing report and local audio references; the ETag header is its revision',
      params: IdParams,
      responses: { 200: { description: 'The recording', schema: v.object({ recording: RecordingV1Schema }), headers: ['ETag'] }, 404: { description: 'Not found' }, 410: { description: 'Deleted' } },
    },
    (c, { params, principal }) => {
      const row = recordings.get(principal, params.id);
      c.header('ETag', etag(row.revision));
      return c.json({ recording: recordingV1Json(row) });
    },
  );
  r.add(
    {
      method: 'put', path: '/recordings/{id}', operationId: 'updateRecording', tag: 'recordings', access: { permission: 'recordings:write' },
      summary:
        'Edit the text: title, transcript, summary, pinned (fields left out stay as they are). The fixed fields may be echoed unchanged; ' +
        'a different value gives 409 immutable_field',
      params: IdParams,
      body: PutV1Body,
      headers: [IF_MATCH],
      responses: {
        200: { description: 'The recording after the edit (an edit that changes nothing keeps the revision)', schema: RecordingV1Response, headers: ['ETag'] },
        409: { description: 'immutable_field, or not_editable (an app capture that its app has not saved yet)' },
        410: { description: 'Deleted' },
        412: { description: 'Stale If-Match: read again' },
        428: { description: 'If-Match missing' },
      },
    },
    async (c, { params, body, principal }) => {
      // Read first: an unknown or deleted recording is 404/410 with or without If-Match.
      recordings.get(principal, params.id);
      const expected = ifMatch(c, true);
      const { title, transcript, summary, pinned, ...echoed } = body;
      const row = await recordings.updateGrouped(principal, params.id, { title, transcript, summary, pinned }, expected, { echoed });
      c.header('ETag', etag(row.revision));
      return c.json(writtenV1(principal, row));
    },
  );
  r.add(
    {
      method: 'delete', path: '/recordings/{id}', operationId: 'deleteRecording', tag: 'recordings', access: { permission: 'recordings:delete' },
      summary: 'Delete a recording: its text leaves the database, the search index and stored webhook deliveries; later access answers 410',
      params: IdParams,
      headers: [IF_MATCH],
      responses: {
        200: { description: 'Deleted; the revision of the deletion', schema: v.object({ recording: v.object({ id: v.string(), revision: Int }) }) },
        410: { description: 'Already deleted' },
        412: { description: 'Stale If-Match' },
        428: { description: 'If-Match missing' },
      },
    },
    async (c, { params, principal }) => {
      const expected = ifMatchFor(c, () => recordings.get(principal, params.id));
      const row = await recordings.removeGrouped(principal, params.id, expected);
      return c.json({ recording: { id: row.id, revision: row.revision } });
    },
  );
}
