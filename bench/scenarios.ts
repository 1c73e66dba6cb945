// What the load phase measures. Each scenario becomes one LoadSpec per round.
import { QUERIES } from './corpus';
import type { LoadSpec } from './load';

export interface Scenario {
  name: string;
  label: string;
  /** Which process answers: the reclib server or the raw baseline. */
  target: 'server' | 'baseline';
  /** data: which prepared file the load reads; file: a file of the scenario's own (bench/edits.ts). */
  spec: Pick<LoadSpec, 'mode' | 'path'> & { data?: 'ids' | 'bodies' | 'import-bodies'; file?: string };
}

const q = (text: string) => `/api/v2/recordings?q=${encodeURIComponent(text)}`;

export const SCENARIOS: Scenario[] = [
  { name: 'create', label: 'create (POST /recordings)', target: 'server', spec: { mode: 'create', path: '/api/v2/recordings', data: 'bodies' } },
  { name: 'create-import', label: 'create, import (random recordedAt over 3 years)', target: 'server', spec: { mode: 'create', path: '/api/v2/recordings', data: 'import-bodies' } },
  { name: 'get', label: 'get by id', target: 'server', spec: { mode: 'byId', path: '/api/v2/recordings/{id}', data: 'ids' } },
  { name: 'baseline', label: 'get by id, raw baseline', target: 'baseline', spec: { mode: 'byId', path: '/api/v2/recordings/{id}', data: 'ids' } },
  { name: 'list', label: 'list page (limit=50)', target: 'server', spec: { mode: 'fixed', path: '/api/v2/recordings?limit=50' } },
  { name: 'search-common', label: `search common word "${QUERIES.common}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.common) } },
  { name: 'search-rare', label: `search rare word "${QUERIES.rare}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.rare) } },
  { name: 'search-two', label: `search two words "${QUERIES.twoWords}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.twoWords) } },
  { name: 'search-prefix', label: `search prefix "${QUERIES.prefix}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.prefix) } },
  { name: 'search-prefix3', label: `search 3-letter prefix "${QUERIES.prefix3}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.prefix3) } },
  { name: 'search-prefix4', label: `search 4-letter prefix "${QUERIES.prefix4}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.prefix4) } },
  { name: 'search-phrase', label: `search phrase ${QUERIES.phrase}`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.phrase) } },
  { name: 'search-none', label: `search no match "${QUERIES.noMatch}"`, target: 'server', spec: { mode: 'fixed', path: q(QUERIES.noMatch) } },
  { name: 'events', label: 'event feed (limit=100)', target: 'server', spec: { mode: 'fixed', path: '/api/v2/events?limit=100' } },
];

/**
 * Round r runs the scenarios starting at a rotated offset, so no scenario always runs first or last.
 * get and its baseline stay back to back (in alternating order), so their ratio compares runs made
 * under the same conditions on a shared machine.
 */
export function roundOrder(items: Scenario[], round: number): Scenario[] {
  const units: Scenario[][] = [];
  for (const s of items) {
    if (s.name === 'baseline' && units.some((u) => u[0]!.name === 'get')) units.find((u) => u[0]!.name === 'get')!.push(s);
    else if (s.name === 'get' && units.some((u) => u[0]!.name === 'baseline')) units.find((u) => u[0]!.name === 'baseline')!.push(s);
    else units.push([s]);
  }
  const rotated = units.map((_, i) => units[(i + round) % units.length]!);
  return rotated.flatMap((u) => (round % 2 ? [...u].reverse() : u));
}
