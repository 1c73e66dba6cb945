// The baseline for get-by-id: raw node:http + better-sqlite3, no framework, no auth, no
// validation, running the real store's lookup (src/store/recording-store.ts, byId) and the same
// row → JSON mapping, so the ratio shows what the rest of reclib's request path costs.
// Usage: node --import tsx bench/baseline-server.ts <db file>
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSqlite } from '../src/db/sqlite';
import { CACHE_SIZE } from '../src/db/open';
import { recordingJson, type RecordingRow } from '../src/services/recording-model';

const db = openSqlite(process.argv[2]!);
db.pragma('busy_timeout = 5000');
// The server's page cache size too, so the ratio compares request handling, not cache sizes.
db.pragma(`cache_size = ${CACHE_SIZE}`);
const accountId = (db.prepare('SELECT id FROM accounts LIMIT 1').get() as { id: string }).id;
const byId = db.prepare<[string, string], RecordingRow>('SELECT * FROM recordings WHERE id = ? AND account_id = ?');

const server = http.createServer((req, res) => {
  const m = /^\/api\/v2\/recordings\/([^/?]+)$/.exec(req.url ?? '');
  const row = m && req.method === 'GET' ? byId.get(decodeURIComponent(m[1]!), accountId) : undefined;
  if (!row || row.deleted_at !== null) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"not found"}}');
    return;
  }
  const body = JSON.stringify({ recording: recordingJson(row) });
  res.writeHead(200, { 'content-type': 'application/json', etag: `"${row.revision}"` }).end(body);
});
server.listen(0, '127.0.0.1', () => console.log(`baseline listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
// Exit normally on SIGTERM so that --cpu-prof writes its profile.
process.once('SIGTERM', () => process.exit(0));
