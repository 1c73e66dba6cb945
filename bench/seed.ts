// Seeding: the account and devices through the CLI (--json), then every recording through the
// project's own recordings service, in-process, many creates per writer transaction. Slower than
// raw SQL, but it writes exactly what the server writes (rows, FTS index, events, idempotency
// keys), so the benchmark can never drift from the real schema.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { PAGE_SIZE } from '../src/db/migrate';
import { openRuntime } from '../src/runtime';
import { Corpus, DEVICES, GENERATOR_VERSION, RARE_COUNT } from './corpus';
import { cli, ROOT } from './processes';
import { createRecording } from './seed-adapter';

export interface SeedMeta {
  size: number;
  generatorVersion: number;
  schemaHash: string;
  accountId: string;
  /** Time spent creating the recordings (service calls and commits), excluding setup. */
  seedMs: number;
  seededAt: string;
  rareCount: number;
}

const BATCH = 2000;

/** Part of the cache key: a seed made under another schema.sql is never reused. */
/** What a seeded file depends on besides the generator: schema.sql and the page size of a new file. */
export const schemaHash = (): string =>
  crypto.createHash('sha256').update(fs.readFileSync(path.join(ROOT, 'schema.sql'))).update(`page_size ${PAGE_SIZE}`).digest('hex').slice(0, 10);

const SAMPLE_IDS = 20_000;

export async function seedCorpus(size: number, file: string, log: (line: string) => void): Promise<{ meta: SeedMeta; sampleIds: string[] }> {
  const { account } = await cli<{ account: { id: string } }>(['accounts', 'create', '--db', file, '--name', 'bench']);
  for (const d of DEVICES) await cli(['devices', 'add', '--db', file, '--account', account.id, '--id', d.id, '--name', d.name, '--model', d.model]);
  const { secret } = await cli<{ secret: string }>([
    'keys', 'create', '--db', file, '--account', account.id, '--name', 'seed', '--permissions', 'recordings:create,recordings:read', '--expiry', '365',
  ]);

  const services = openRuntime(loadConfig({ db: file }, {}));
  const principal = services.auth.authenticate(secret);
  const corpus = new Corpus(size);
  const every = Math.max(1, Math.floor(size / SAMPLE_IDS));
  const sampleIds: string[] = [];
  const t0 = performance.now();
  let lastLog = t0;
  try {
    for (let start = 0; start < size; start += BATCH) {
      const end = Math.min(size, start + BATCH);
      services.core.writer.write(() => {
        for (let i = start; i < end; i++) {
          const id = createRecording(services, principal, `seed-${i}`, corpus.recording(i));
          if (i % every === 0 && sampleIds.length < SAMPLE_IDS) sampleIds.push(id);
        }
      });
      const now = performance.now();
      if (now - lastLog > 10_000 || end === size) {
        lastLog = now;
        const rate = Math.round(end / ((now - t0) / 1000));
        log(`  ${end.toLocaleString('en-US')} / ${size.toLocaleString('en-US')} (${rate.toLocaleString('en-US')}/s, eta ${Math.round((size - end) / rate)} s)`);
      }
    }
    const seedMs = performance.now() - t0;
    // A library that has been at rest: the server's idle merger merges any level of four or more
    // index segments (usermerge 4) once it is quiet, and compacts the index into one segment after
    // a long quiet spell, so a real library of this size, written over months, has had the quiet
    // to settle. Here the same slices run back to back (256 pages each
    // instead of 16, for speed; the structure they leave is the same).
    const t1 = performance.now();
    let slices = 0;
    while (services.recordings.merger.slice(256)) slices++;
    // And compacted, as the merger does after a long quiet spell (COMPACT_QUIET_MS).
    let compactions = 0;
    while (services.recordings.merger.compactSlice(4096)) compactions++;
    log(`  index settled as an idle server leaves it: ${slices} merge slices and ${compactions} compaction slices in ${Math.round((performance.now() - t1) / 1000)} s`);
    // Leave one self-contained file: fold the WAL back so copying the .db copies everything.
    services.core.db.pragma('wal_checkpoint(TRUNCATE)');
    return {
      meta: {
        size,
        generatorVersion: GENERATOR_VERSION,
        schemaHash: schemaHash(),
        accountId: account.id,
        seedMs,
        seededAt: new Date().toISOString(),
        rareCount: Math.min(RARE_COUNT, size),
      },
      sampleIds,
    };
  } finally {
    services.core.db.close();
  }
}
