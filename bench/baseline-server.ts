// The baseline for get-by-id: raw node:http + better-sqlite3, no framework, no auth, serving the
// same row with the same SQL shape as the real store (src/store/recording-store.ts), so the
// ratio shows what everything else in reclib's request path costs.
// Usage: node --import tsx bench/baseline-server.ts <db file>
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]);
db.pragma('busy_timeout = 5000');
// Same shape as the real store's lookup by id (filled in when the recordings store lands).
const byId = db.prepare<[string], Record<string, unknown>>('SELECT * FROM recordings WHERE id = ?');

const server = http.createServer((req, res) => {
  const m = /^\/api\/v2\/recordings\/([^/?]+)$/.exec(req.url ?? '');
  const row = m && req.method === 'GET' ? byId.get(decodeURIComponent(m[1]!)) : undefined;
  if (!row) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"not found"}}');
    return;
  }
  const body = JSON.stringify({ recording: row });
  res.writeHead(200, { 'content-type': 'application/json', etag: `"${String(row.revision)}"` }).end(body);
});
server.listen(0, '127.0.0.1', () => console.log(`baseline listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
