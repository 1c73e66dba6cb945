// The one If-Match rule (docs/decisions.md §5), shared by recordings (v1, v2) and device settings:
// the value is the revision from an ETag, accepted as "3", W/"3" or 3. Weak tags are accepted on
// purpose although RFC 9110 asks for strong comparison, because clients copy whatever they got.
// `*` and lists of tags are refused: a write must name the revision it was based on.
import { AppError, invalid } from '../errors';

export interface IfMatchOptions {
  /** Missing header → 428 precondition_required (otherwise undefined is returned). */
  required: boolean;
  /** Longer values → 400 (device settings: 100 chars). */
  maxLength?: number;
}

const TAG = /^(?:W\/)?(?:"(\d{1,15})"|(\d{1,15}))$/;

export function parseIfMatch(header: string | undefined | null, opts: { required: true; maxLength?: number }): number;
export function parseIfMatch(header: string | undefined | null, opts: IfMatchOptions): number | undefined;
export function parseIfMatch(header: string | undefined | null, opts: IfMatchOptions): number | undefined {
  if (header === undefined || header === null) {
    if (!opts.required) return undefined;
    throw new AppError('precondition_required', 'If-Match header is required: send the ETag of your last read, e.g. If-Match: "3"');
  }
  if (opts.maxLength !== undefined && header.length > opts.maxLength) {
    throw invalid(`If-Match header must be at most ${opts.maxLength} characters`);
  }
  const m = TAG.exec(header.trim());
  const digits = m?.[1] ?? m?.[2];
  if (digits === undefined) throw invalid('If-Match header must be one revision ETag: "3", W/"3" or 3');
  return Number(digits);
}

/** The ETag header value of a revision. */
export const etag = (revision: number): string => `"${revision}"`;
