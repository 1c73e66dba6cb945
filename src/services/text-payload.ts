// The text payload (docs/decisions.md §18, §6): every default-payload
// field plus eventId, kind, title, transcript, summary, recordedAt, fetchUrl and, for rule
// deliveries, command. Built once from the recording as it is at the selected revision and stored
// as the delivery body, so retries resend these exact bytes after later edits. Never audio, local
// files, coordinates or credentials.
import type { Config } from '../config';
import type { RecordingType } from './device-inputs';
import type { RecordingRow } from './recording-model';

export interface TextPayload {
  /** The delivery's stable id (receivers deduplicate on it). */
  id: string;
  type: string;
  recordingId: string;
  revision: number;
  createdAt: number;
  /** The event it carries: the decimal feed id, or manual_… for a manual send. */
  eventId: string;
  kind: RecordingType | null;
  title: string;
  transcript: string;
  summary: string;
  recordedAt: number | null;
  fetchUrl: string;
  command?: string;
}

export interface TextPayloadInput {
  deliveryId: string;
  type: string;
  eventId: string;
  /** The event's time (for a manual send: the time of the send). */
  createdAt: number;
  revision: number;
  row: RecordingRow;
  /** Rule deliveries only: the transcript without the matched prefix. */
  command?: string | undefined;
}

/** `<publicUrl>/api/v1/recordings/<id>`: the current revision, with its own authentication. */
export function fetchUrl(config: Pick<Config, 'publicUrl' | 'host' | 'port'>, recordingId: string): string {
  const base = config.publicUrl ?? `http://${config.host}:${config.port}`;
  return `${base}/api/v1/recordings/${encodeURIComponent(recordingId)}`;
}

export function textPayloadBody(config: Pick<Config, 'publicUrl' | 'host' | 'port'>, input: TextPayloadInput): string {
  const { row } = input;
  // A deletion carries no text: the tombstone has none, and kind and recordedAt are null.
  const deleted = row.deleted_at !== null;
  const payload: TextPayload = {
    id: input.deliveryId,
    type: input.type,
    recordingId: row.id,
    revision: input.revision,
    createdAt: input.createdAt,
    eventId: input.eventId,
    kind: deleted ? null : row.type,
    title: deleted ? '' : row.title,
    transcript: deleted ? '' : row.transcript,
    summary: deleted ? '' : row.summary,
    recordedAt: deleted ? null : row.recorded_at,
    fetchUrl: fetchUrl(config, row.id),
  };
  if (input.command !== undefined) payload.command = input.command;
  return JSON.stringify(payload);
}

/**
 * Whitespace and punctuation a speech recogniser puts around words (" Todo, buy"), skipped at the
 * start; with the invisible marks that lead right-to-left text or slip in (zero-width space and
 * joiners, direction marks, embeddings and isolates, word joiner, byte order mark). Not every
 * format character: U+0600, the Arabic number sign, belongs to the number after it.
 */
const LEADING_NOISE = /^[\s\p{P}\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]+/u;
/** A character that continues a word: a letter, a digit, or a combining mark on one ("todó" spelt o + U+0301). */
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]/u;

/**
 * The capture-rule prefix test (docs/decisions.md §12). Returns the command, or null when the rule does not
 * fire. Speech recognisers write "Todo, buy apples." or " todo: eggs", and whoever said them
 * started with "todo"; so the transcript's leading whitespace and punctuation are skipped, the
 * prefix is compared case-insensitively, and the match must end at a word boundary ("todos are
 * done" is not a todo). The command is the rest without its leading whitespace and punctuation
 * ("buy apples."). The prefix is read the same way, so one configured as " todo" or "#todo"
 * matches what "todo" matches; a prefix of punctuation alone ("#") is compared as written.
 * The boundary is checked only after a prefix that ends in a letter or digit: "todo:" fires for
 * "todo:buy", where ":" already ends the word.
 */
export function matchPrefix(transcript: string, rulePrefix: string): string | null {
  // Compared in one Unicode form (NFC), so "café" typed with é matches "cafe" + U+0301 from a
  // recogniser; the command is cut from the transcript as it was written.
  const wanted = rulePrefix.normalize('NFC');
  let prefix = wanted.replace(LEADING_NOISE, '');
  let text = transcript.replace(LEADING_NOISE, '');
  if (prefix === '') {
    prefix = wanted.replace(/^\s+/u, '');
    text = transcript.replace(/^\s+/u, '');
  }
  const cut = nfcCut(text, prefix.length);
  if (cut === undefined) return null;
  const head = text.slice(0, cut).normalize('NFC');
  const same = head.toLowerCase() === prefix.toLowerCase() || head.toUpperCase() === prefix.toUpperCase();
  if (!same) return null;
  const rest = text.slice(cut);
  const last = [...prefix].at(-1) ?? '';
  if (WORD_CHAR.test(last) && WORD_CHAR.test(rest)) return null;
  return rest.replace(LEADING_NOISE, '');
}

/**
 * Where in `text` its NFC form reaches `units` UTF-16 units: the length of text's start whose NFC
 * is that long, or undefined when none is (the text is shorter, or a character composed across
 * the point). Looks at about as many characters as the prefix has, whatever the text's length.
 */
function nfcCut(text: string, units: number): number | undefined {
  if (text.slice(0, units + 1).normalize('NFC') === text.slice(0, units + 1)) return text.length >= units ? units : undefined;
  // The longest such start: "todo" + U+0301 is "todó" in NFC, one character, not "todo" and a mark.
  let end = 0;
  let found: number | undefined;
  for (const ch of text) {
    end += ch.length;
    const length = text.slice(0, end).normalize('NFC').length;
    if (length === units) found = end;
    if (length > units || end > 4 * units + 16) break;
  }
  return found;
}
