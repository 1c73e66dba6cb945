// Input schemas shared by v1 and v2 routes. One definition each, so validation and the OpenAPI
// description cannot drift apart.
import * as v from 'valibot';
import { ID_PATTERN } from '../ids';
import { PERMISSIONS } from '../permissions';
import { MAX_RECORDED_AT } from '../services/recording-model';
import { PAGE_BYTES } from '../services/recording-search';

/** A path or reference id: 1-256 chars of the id pattern (docs/decisions.md §20). */
export const Id = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(256, 'must be at most 256 characters'),
  v.regex(ID_PATTERN, `must match ${ID_PATTERN.source}`),
);

export const IdParams = v.object({ id: Id });

/** A capture time in a body: whole Unix milliseconds the sort key can hold. */
export const RecordedAt = v.pipe(
  v.number(),
  v.integer('must be a whole number of Unix milliseconds'),
  v.minValue(0, `must be from 0 to ${MAX_RECORDED_AT}`),
  v.maxValue(MAX_RECORDED_AT, `must be from 0 to ${MAX_RECORDED_AT} (year 2248)`),
);

/** A query integer (decimal digits only) within bounds. */
export const queryInt = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,16}$/, `must be a whole number from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** Permission names (v1 scopes); the picklist puts the allowed names into the OpenAPI document. */
export const Permissions = v.pipe(
  v.array(v.picklist(PERMISSIONS, `must be one of ${PERMISSIONS.join(', ')}`)),
  v.minLength(1, 'must name at least one permission'),
  v.maxLength(20),
);

export const Expiry = v.optional(
  v.pipe(v.number(), v.integer('must be a whole number of days'), v.minValue(1, 'must be 1-365 days'), v.maxValue(365, 'must be 1-365 days')),
);

export const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'));

const PAGE_MB = PAGE_BYTES / (1024 * 1024);

/** `limit` of a recordings page (v1 and v2): the count bound; the byte bound is PAGE_BYTES. */
export const RecordingsLimit = v.optional(
  v.pipe(
    queryInt(1, 100),
    v.description(
      `Page size 1-100, default 50. A page also stops at about ${PAGE_MB} MB of JSON (long transcripts), and a search (q) ` +
        'stops after a bounded amount of work (a few milliseconds of reading candidates), so a page may hold fewer recordings ' +
        'than limit, or none, with a non-null nextCursor: keep paging until nextCursor is null.',
    ),
  ),
  '50',
);

/** `nextCursor` of a recordings page (v1 and v2). */
export const RecordingsNextCursor = v.pipe(
  v.nullable(v.string()),
  v.description(
    `Pass as cursor for the next page; null on the last page. A page cut short (limit reached, about ${PAGE_MB} MB of JSON, ` +
      "or a search's work bound) has one even when it holds fewer than limit recordings, or none: it then continues after the " +
      'last recording the search looked at. Paging on returns every match exactly once, newest first.',
  ),
);
