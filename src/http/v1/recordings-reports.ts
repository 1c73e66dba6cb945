// v1 putProcessing and putAudioAsset: reports of the application that imported the recording
// (spec v1 note 1). A report that changes the recording bumps its revision and, once the recording
// has been announced, emits recording.updated; a report that repeats what is stored changes nothing.
import type { HttpDeps } from '../env';
import { etag } from '../if-match';
import type { ApiRouter } from '../router';
import { IdParams } from '../schemas';
import { AudioAssetBody, ProcessingBody } from './recordings-input';
import { RecordingV1Response, writtenV1 } from './recordings-shape';
import { ifMatch } from '../request-headers';

const IF_MATCH = { name: 'If-Match', required: false, description: 'Optional: when sent, the report applies only at this revision (412 when stale)' };

const common = {
  403: { description: 'wrong_application: another application imported this recording' },
  404: { description: 'Not found' },
  410: { description: 'Deleted' },
  412: { description: 'Stale If-Match' },
};

export function registerRecordingReportsV1(r: ApiRouter, deps: HttpDeps): void {
  const { recordings } = deps.services;
  r.add(
    {
      method: 'put', path: '/recordings/{id}/processing', operationId: 'putProcessing', tag: 'recordings', access: { permission: 'recordings:write' },
      summary: "Report the client's processing state (the service does not transcribe); may carry the capture metadata late",
      params: IdParams,
      body: ProcessingBody,
      headers: [IF_MATCH],
      responses: {
        200: { description: 'The recording after the report', schema: RecordingV1Response },
        ...common,
        409: { description: 'not_editable: a status move that is not allowed; immutable_field: capture metadata already set to another value' },
      },
    },
    (c, { params, body, principal }) => {
      const expected = ifMatch(c, false);
      const row = recordings.reportProcessing(principal, params.id, body, expected);
      c.header('ETag', etag(row.revision));
      return c.json(writtenV1(principal, row));
    },
  );
  r.add(
    {
      method: 'put', path: '/recordings/{id}/audio-assets', operationId: 'putAudioAsset', tag: 'recordings', access: { permission: 'recordings:write' },
      summary: 'Report (available: true, the default) or withdraw (false) one opaque local audio reference of a memo',
      params: IdParams,
      body: AudioAssetBody,
      headers: [IF_MATCH],
      responses: {
        200: { description: 'The recording after the report', schema: RecordingV1Response },
        400: { description: 'A path, URL or other non-opaque id' },
        ...common,
        409: { description: 'not_editable: a clip keeps no audio' },
      },
    },
    (c, { params, body, principal }) => {
      const expected = ifMatch(c, false);
      const row = recordings.reportAudio(principal, params.id, body, expected);
      c.header('ETag', etag(row.revision));
      return c.json(writtenV1(principal, row));
    },
  );
}
