// The benchmark corpus: realistic transcripts drawn from a Zipf-distributed vocabulary with a
// seeded PRNG, so every run (and every machine) seeds byte-identical libraries. Recording i is
// generated from its own seed, so any index can be regenerated without walking the ones before.
// Bump GENERATOR_VERSION whenever the output changes: it is part of the cache key.
import { buildVocabulary, COMMON_WORD, RARE_WORD, TWO_WORDS, WIDE_PREFIX } from './vocabulary';

export const GENERATOR_VERSION = 3;

/** Number of recordings that carry RARE_WORD, whatever the corpus size (a known small set). */
export const RARE_COUNT = 25;

/** The search queries the load phase measures; each has a known kind of result set. */
export const QUERIES = {
  common: COMMON_WORD,
  rare: RARE_WORD,
  twoWords: TWO_WORDS.join(' '),
  prefix: 'meet',
  /** Three letters with hundreds of forms ("int…"): too many to expand, tested on the text. */
  prefix3: WIDE_PREFIX.slice(0, 3),
  /** Four letters with hundreds of forms ("inte…", 330 as in English): too many to expand. */
  prefix4: WIDE_PREFIX,
  /** Common words in every recording, almost never in this order. */
  phrase: '"the of and to a"',
  /** A word no recording has. */
  noMatch: 'xylophone',
} as const;

export const DEVICES = [
  { id: 'ring-kitchen', name: 'Kitchen ring', model: 'ring' },
  { id: 'ring-daily', name: 'Daily ring', model: 'ring' },
  { id: 'pin-work', name: 'Work pin', model: 'pin' },
  { id: 'pendant-1', name: 'Pendant', model: 'pendant' },
] as const;

/** The library spans two years that end here (a fixed date keeps the corpus deterministic). */
export const CORPUS_END_MS = Date.UTC(2025, 0, 1);
export const CORPUS_SPAN_MS = 2 * 365 * 24 * 3600 * 1000;

export interface CorpusRecording {
  type: 'clip' | 'memo';
  title: string;
  transcript: string;
  summary: string;
  recordedAt: number;
  deviceId?: string;
  audio?: Array<{ clientId: string; fileId: string }>;
}

/** mulberry32: tiny, fast, good enough for synthetic text; seeded per recording. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes an index into a well-spread 32-bit seed (splitmix-style finaliser). */
export const seedFor = (i: number, salt = 0x9e3779b9): number => {
  let z = (i + salt) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
};

const ZIPF_S = 1.0;

export class Corpus {
  readonly words: string[];
  private readonly cdf: Float64Array;
  private readonly rareAt: Set<number>;

  constructor(readonly size: number) {
    this.words = buildVocabulary(prng(0xc0ffee));
    this.cdf = new Float64Array(this.words.length);
    let sum = 0;
    for (let r = 0; r < this.words.length; r++) this.cdf[r] = sum += 1 / Math.pow(r + 1, ZIPF_S);
    for (let r = 0; r < this.cdf.length; r++) this.cdf[r]! /= sum;
    // Evenly spaced, so the rare word's recordings are spread over the whole time range.
    this.rareAt = new Set(Array.from({ length: Math.min(RARE_COUNT, size) }, (_, k) => Math.floor(((k + 0.5) * size) / RARE_COUNT)));
  }

  /** Indices of the recordings that contain RARE_WORD. */
  rareIndices(): number[] {
    return [...this.rareAt].sort((a, b) => a - b);
  }

  private word(rnd: () => number): string {
    const u = rnd();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }

  private sentence(rnd: () => number, n: number): string {
    const parts: string[] = [];
    for (let k = 0; k < n; k++) parts.push(this.word(rnd));
    const first = parts[0]!;
    parts[0] = first.charAt(0).toUpperCase() + first.slice(1);
    return parts.join(' ') + (rnd() < 0.15 ? '?' : '.');
  }

  /** Recording i of the corpus (0 ≤ i < size); indices ≥ size give fresh bodies for creates. */
  recording(i: number): CorpusRecording {
    const rnd = prng(seedFor(i));
    const type = rnd() < 0.7 ? 'clip' : 'memo';
    // Clips are short bursts, memos longer notes; both within 100-400 words.
    const target = type === 'clip' ? 100 + Math.floor(rnd() * 120) : 150 + Math.floor(rnd() * 251);
    const sentences: string[] = [];
    let count = 0;
    while (count < target) {
      const n = Math.min(target - count, 4 + Math.floor(rnd() * 12));
      sentences.push(this.sentence(rnd, n));
      count += n;
    }
    if (this.rareAt.has(i)) {
      const at = Math.floor(rnd() * sentences.length);
      sentences[at] = sentences[at]!.replace(/[.?]$/, ` ${RARE_WORD}.`);
    }
    const titleWords = 2 + Math.floor(rnd() * 5);
    const title = this.sentence(rnd, titleWords).slice(0, -1);
    const summary = type === 'memo' ? this.sentence(rnd, 10 + Math.floor(rnd() * 15)) : '';
    // Mostly captured in time order, evenly over the span; 3% are back-dated imports.
    const base = CORPUS_END_MS - CORPUS_SPAN_MS;
    const recordedAt =
      rnd() < 0.03
        ? base + Math.floor(rnd() * CORPUS_SPAN_MS * (i / Math.max(1, this.size)))
        : base + Math.floor(((i + rnd()) / Math.max(1, this.size)) * CORPUS_SPAN_MS);
    const rec: CorpusRecording = { type, title, transcript: sentences.join(' '), summary, recordedAt: Math.min(recordedAt, CORPUS_END_MS) };
    if (rnd() < 0.8) rec.deviceId = DEVICES[Math.floor(rnd() * DEVICES.length)]!.id;
    if (type === 'memo') rec.audio = [{ clientId: 'phone-1', fileId: `f${i.toString(36)}` }];
    return rec;
  }
}
