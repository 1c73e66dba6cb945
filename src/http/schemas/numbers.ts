// Numbers in answers, as their OpenAPI type says: whole numbers (a generated client in Kotlin, Swift
// or Java makes "number" a Double, and a revision formatted from it, "1.0", is no ETag).
import * as v from 'valibot';

/** A time in an answer: whole Unix milliseconds. */
export const UnixMs = v.pipe(v.number(), v.integer(), v.description('Unix milliseconds'));

/** A whole number in an answer (a revision, a count, a status code, a feed position). */
export const Int = v.pipe(v.number(), v.integer());
