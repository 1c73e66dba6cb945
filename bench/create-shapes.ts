// The two traffic shapes of creates that issue 14 judges (point 3), as request bodies shared by the
// server's create scenarios and the in-process ceiling (bench/ceiling.ts), so both insert the same:
// - device captures: recordedAt left to the server (≈ now, the newest end of the time-ordered key);
// - imports: a random recordedAt over the last three years (rows land all over the key range).
import fs from 'node:fs';
import path from 'node:path';
import { Corpus, prng } from './corpus';

export type CreateShape = 'device' | 'import';

export const IMPORT_SPAN_MS = 3 * 365 * 24 * 3600 * 1000;

/** How many distinct bodies each file holds (requests cycle through them with fresh keys). */
const BODIES = 1000;

/** The bodies of one shape; `now` anchors the imports' three years (the run's start). */
export function createBodies(size: number, shape: CreateShape, now: number): Array<Record<string, unknown>> {
  const gen = new Corpus(size);
  const rnd = prng(0x1e5c0de);
  return Array.from({ length: BODIES }, (_, k) => {
    // Fresh texts beyond the corpus; deviceId is not part of a v2 body.
    const { deviceId: _d, recordedAt: _r, ...body } = gen.recording(size + k);
    return shape === 'device' ? body : { ...body, recordedAt: now - Math.floor(rnd() * IMPORT_SPAN_MS) };
  });
}

/** Writes the imports' bodies under `dir` (run.ts writes the device captures' itself); returns the file. */
export function writeImportBodies(dir: string, size: number, now = Date.now()): string {
  const file = path.join(dir, 'create-import-bodies.json');
  fs.writeFileSync(file, JSON.stringify(createBodies(size, 'import', now)));
  return file;
}
