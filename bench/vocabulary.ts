// The corpus vocabulary, in rank order (rank 1 = most frequent). Spoken-note function words
// first, then everyday content words mixed with accented forms, then synthetic word forms that
// give the long tail a realistic few thousand distinct tokens.

/** The measured "common word" query: a content word near the top of the ranks (in most recordings). */
export const COMMON_WORD = 'project';
/** Two mid-frequency words, measured together as the two-word query. */
export const TWO_WORDS = ['budget', 'review'] as const;
/** Planted at a known low count by the corpus; never produced by the generator otherwise. */
export const RARE_WORD = 'quixotrel';
/**
 * A four-letter prefix with hundreds of word forms, as "inte" has in English (332 forms in a real
 * word list): more than the search expands into an OR of whole words, so it is the wide-prefix case.
 * Its first three letters ("int") are likewise a three-letter prefix with hundreds of forms.
 */
export const WIDE_PREFIX = 'inte';
/** How many forms start with WIDE_PREFIX: a few real words near the top, the rest through the tail. */
export const WIDE_PREFIX_FORMS = 330;
const WIDE_REAL = ['interview', 'interesting', 'internal', 'interest', 'intend', 'integrate', 'internet', 'interval', 'intent', 'intern'];

const VOCABULARY_SIZE = 6000;

const FUNCTION_WORDS = `the and to i a of that we it you is in for so on this with be have just like okay yeah
um know think need going can about do what get but not it's uh at are was if my they our then
there all some out will up me one don't from or maybe time also really right now`.split(/\s+/);

// COMMON_WORD and TWO_WORDS sit at fixed places in this list, so their frequency is stable.
const CONTENT_WORDS = `meeting project call tomorrow team email send remember week today idea check
follow client later morning note plan next update list work talk friday monday thing start
budget people buy look phone report design draft schedule review question answer office home
meet meetings deadline launch travel flight hotel dinner lunch coffee groceries milk bread doctor
appointment kids school pickup birthday gift party weekend vacation book read write finish
customer sales numbers quarter goal goals roadmap feature release bug fix test deploy server
database search notes memo clip recording ring pendant pin device settings input battery charge
walk run gym workout recipe cook kitchen garden water plants car garage repair insurance bank
pay bill invoice contract lawyer tax forms deadline conference slides presentation demo feedback
interview hire candidate offer salary manager boss colleague partner vendor supplier order
shipping delivery package return refund store market price discount estimate proposal summary
agenda minutes action items owner priority urgent blocked waiting done cancel reschedule confirm
calendar invite reminder alarm morning evening night afternoon noon early late soon quickly
remind message text reply voicemail podcast music playlist movie show episode article news
weather rain snow sun trip train bus airport taxi map address street city downtown neighbour
apartment rent lease landlord move boxes furniture couch desk chair lamp window door key lock
meetup meeting's meeter`.split(/\s+/);

const ACCENTED_WORDS = `café résumé naïve jalapeño façade crème brûlée piñata über señor déjà vu protégé
fiancée entrée soufflé zürich são paulo münchen málaga ångström smörgåsbord ærø coöperate
rendezvous piñon exposé mañana jürgen andré josé zoë chloé renée élodie françois gérard
hélène nuñez muñoz peña garçon crêpe pâté tête-à-tête naïveté doppelgänger fräulein straße`.split(
  /\s+/,
);

const ONSETS = ['b', 'br', 'c', 'ch', 'd', 'dr', 'f', 'fl', 'g', 'gr', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'pl', 'qu', 'r', 's', 'sh', 'st', 't', 'tr', 'v', 'w', 'z'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', '', 'n', 'r', 's', 't', 'l', 'm', 'nd', 'st', 'ck'];
const ACCENTS: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü', n: 'ñ', c: 'ç' };

function syntheticWord(rnd: () => number): string {
  const syllables = 1 + Math.floor(rnd() * 3);
  let w = '';
  for (let s = 0; s < syllables; s++) {
    w += ONSETS[Math.floor(rnd() * ONSETS.length)]! + VOWELS[Math.floor(rnd() * VOWELS.length)]!;
    if (s === syllables - 1 || rnd() < 0.3) w += CODAS[Math.floor(rnd() * CODAS.length)]!;
  }
  // About one synthetic form in twelve carries a diacritic, as names and loanwords do.
  if (rnd() < 0.08) {
    const at = Math.floor(rnd() * w.length);
    const ch = w.charAt(at);
    if (ACCENTS[ch]) w = w.slice(0, at) + ACCENTS[ch] + w.slice(at + 1);
  }
  return w;
}

/** Words in rank order; deterministic for a given PRNG. */
export function buildVocabulary(rnd: () => number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (w: string) => {
    if (w && !seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  };
  FUNCTION_WORDS.forEach(add);
  // Accented words are spread through the content ranks (every fourth slot after the first 40).
  const accented = [...ACCENTED_WORDS];
  CONTENT_WORDS.forEach((w, k) => {
    add(w);
    if (k > 40 && k % 4 === 0 && accented.length) add(accented.shift()!);
  });
  accented.forEach(add);
  WIDE_REAL.forEach(add);
  const reserved = (w: string) => w.startsWith('meet') || w.startsWith(RARE_WORD.slice(0, 5)) || w === RARE_WORD || w.startsWith('int');
  // The rest of the wide-prefix family: "inte" + a synthetic ending, one every so many tail ranks.
  const wide: string[] = [];
  for (let guard = 0; wide.length < WIDE_PREFIX_FORMS - WIDE_REAL.length && guard < WIDE_PREFIX_FORMS * 20; guard++) {
    const w = WIDE_PREFIX + syntheticWord(rnd);
    if (!seen.has(w) && !wide.includes(w)) wide.push(w);
  }
  const every = Math.floor((VOCABULARY_SIZE - out.length) / (wide.length + 1));
  for (let guard = 0; out.length < VOCABULARY_SIZE && guard < VOCABULARY_SIZE * 20; guard++) {
    if (wide.length > 0 && (out.length + 1) % every === 0) add(wide.shift()!);
    const w = syntheticWord(rnd);
    if (!reserved(w)) add(w);
  }
  return out;
}
