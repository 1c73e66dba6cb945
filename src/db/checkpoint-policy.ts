// The checkpointer worker's one decision after each passive pass (src/db/checkpointer.ts says why),
// apart so that it can be tested with any clock: the worker itself runs on a real one.

/**
 * What follows a passive pass: the erasure's truncation once it is due and the writers are quiet
 * (the pass just copied every frame, so there is nothing left to copy while writers wait), or due
 * at its deadline whatever they do; else a truncation that shrinks a WAL file grown past the limit,
 * at a quiet pass only.
 */
export function afterPass(s: { now: number; quiet: boolean; eraseAt: number | null; eraseBy: number; sizeLimit: number; walSize: () => number }): 'erase' | 'shrink' | 'none' {
  if (s.eraseAt !== null && s.now >= s.eraseAt && (s.quiet || s.now >= s.eraseBy)) return 'erase';
  if (s.quiet && s.walSize() > s.sizeLimit) return 'shrink';
  return 'none';
}

