// `reclib backup --to FILE` and `reclib restore --from FILE` (docs/decisions.md §11).
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_DB, loadConfig } from '../config';
import { backupDatabase, BackupError } from '../db/backup';
import { restoreDatabase, RestoreError } from '../db/restore';
import { CliError, fail, print, type CommonOpts } from './output';
import { common, withServices } from './shared';

const asCliError = (e: unknown): unknown => (e instanceof BackupError || e instanceof RestoreError ? new CliError(e.code, e.message) : e);

export function registerBackupCommands(program: Command): void {
  common(program.command('backup').description('write a consistent copy of the database (FILE) and its master secret (FILE.secret) while the server runs'))
    .requiredOption('--to <file>', 'destination file (neither it nor FILE.secret may exist)')
    .option('--master-secret-file <file>', 'the master secret the server uses (RECLIB_MASTER_SECRET_FILE; default <db>.secret)')
    .action((opts: CommonOpts & { to: string }) => {
      // Opening the database makes a master secret where none is: a backup would then hold a new
      // secret, not the server's (kept elsewhere, --master-secret-file), and a restore from it
      // would sign webhooks no consumer accepts.
      const config = loadConfig({ db: opts.db, masterSecretFile: opts.masterSecretFile });
      if (config.db !== ':memory:' && fs.existsSync(config.db) && !fs.existsSync(config.masterSecretFile)) {
        fail(new CliError('secret_not_found', `no master secret at ${path.resolve(config.masterSecretFile)}: the server keeps it elsewhere? name it with --master-secret-file (or RECLIB_MASTER_SECRET_FILE); a backup needs the one the server signs webhooks with`));
      }
      return withServices(opts, async (s) => {
        try {
          const b = await backupDatabase(s.core.db, opts.to, s.core.masterSecret);
          print(
            opts,
            { backup: { file: b.file, secretFile: b.secretFile, pages: b.pages, bytes: b.bytes, integrity: 'ok' } },
            `backup written to ${b.file} (${b.bytes} bytes, integrity ok)\nmaster secret written to ${b.secretFile}: keep the two files together`,
          );
        } catch (e) {
          throw asCliError(e);
        }
      });
    });

  program
    .command('restore')
    .description('replace the database and its master secret with a backup; the server must be stopped')
    .requiredOption('--from <file>', 'a backup made by reclib backup (FILE.secret must be beside it)')
    .option('--db <file>', `SQLite database file to restore into (env RECLIB_DB, default ${DEFAULT_DB})`)
    .option('--master-secret-file <file>', 'where the master secret goes (RECLIB_MASTER_SECRET_FILE; default <db>.secret)')
    .option('--json', 'print exactly one JSON object on stdout')
    .action(async (opts: CommonOpts & { from: string }) => {
      try {
        const config = loadConfig({ db: opts.db, masterSecretFile: opts.masterSecretFile });
        const r = await restoreDatabase({ from: opts.from, db: config.db, secretFile: config.masterSecretFile, now: Date.now() });
        const kept = [
          r.kept?.database ? `\nthe previous database is kept as ${r.kept.database}` : '',
          r.kept?.secretFile ? `\nthe previous master secret is kept as ${r.kept.secretFile}` : '',
        ].join('');
        print(opts, { restore: r }, `restored ${opts.from} into ${r.database} (master secret ${r.secretFile})${kept}`);
      } catch (e) {
        fail(asCliError(e));
      }
    });
}
