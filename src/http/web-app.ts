// The web app's server side (docs/decisions.md §8): GET / answers the app's HTML page to everyone, and
// /app/<hashed name> its assets from dist/app (built by build.mjs with .gz and .br beside each
// file), cached forever because a changed file gets a new name. Everything is read once and kept
// in memory: the whole app is a few dozen kilobytes.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Hono } from 'hono';
import type { AppEnv } from './env';
import { plainRoute } from './router';

/** The policy of every HTML page: only our own scripts, styles and connections; never framed. */
export const HTML_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The security headers of an HTML response; `csp` lets a page widen the policy by hashes. */
export function htmlHeaders(csp = HTML_CSP): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cache-control': 'no-cache',
  };
}

interface Asset {
  type: string;
  raw: Buffer;
  gzip?: Buffer;
  brotli?: Buffer;
}

interface Built {
  html: string;
  icon: string | undefined;
  assets: Map<string, Asset>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** dist/app beside the bundle (dist/reclib.cjs) or in a checkout run by tsx (src/http → ../../dist). */
export function findAppDir(): string | null {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    for (const candidate of [path.join(dir, 'app'), path.join(dir, 'dist', 'app')]) {
      if (fs.existsSync(path.join(candidate, 'manifest.json'))) return candidate;
    }
    dir = path.dirname(dir);
  }
  return null;
}

const readIfThere = (file: string): Buffer | undefined => (fs.existsSync(file) ? fs.readFileSync(file) : undefined);

function load(dir: string): Built {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { script: string; style?: string; icon?: string; files: string[] };
  const assets = new Map<string, Asset>();
  for (const name of manifest.files) {
    const file = path.join(dir, name);
    assets.set(name, {
      type: TYPES[path.extname(name)] ?? 'application/octet-stream',
      raw: fs.readFileSync(file),
      gzip: readIfThere(`${file}.gz`),
      brotli: readIfThere(`${file}.br`),
    });
  }
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>reclib</title>
${manifest.icon ? `<link rel="icon" href="/app/${manifest.icon}" type="image/svg+xml">\n` : ''}${manifest.style ? `<link rel="stylesheet" href="/app/${manifest.style}">\n` : ''}<script type="module" src="/app/${manifest.script}"></script>
</head>
<body>
<div id="root"></div>
<noscript><p>The reclib library needs JavaScript. The JSON API is at /api/v2 and its reference at /docs.</p></noscript>
</body>
</html>
`;
  return { html, icon: manifest.icon, assets };
}

/** Picks the smallest encoding the client accepts. */
function encodingFor(c: Context, asset: Asset): { body: Buffer; encoding?: string } {
  const accepted = (c.req.header('accept-encoding') ?? '').toLowerCase();
  if (asset.brotli && /\bbr\b/.test(accepted)) return { body: asset.brotli, encoding: 'br' };
  if (asset.gzip && /\bgzip\b/.test(accepted)) return { body: asset.gzip, encoding: 'gzip' };
  return { body: asset.raw };
}

export function registerWebApp(app: Hono<AppEnv>, notFound: (c: Context<AppEnv>) => Response): void {
  let built: Built | null | undefined;
  const get = (): Built | null => {
    if (built === undefined) {
      const dir = findAppDir();
      built = dir ? load(dir) : null;
    }
    return built;
  };

  app.get(
    '/',
    plainRoute((c) => {
      const b = get();
      if (!b) {
        return c.body('<!doctype html><title>reclib</title><p>The web app is not built. Run <code>npm run build</code>.</p>', 503, htmlHeaders());
      }
      return c.body(b.html, 200, htmlHeaders());
    }),
  );

  // Browsers ask for /favicon.ico on pages without an icon link (/docs): the app's icon.
  app.get(
    '/favicon.ico',
    plainRoute((c) => {
      const b = get();
      const icon = b?.icon ? b.assets.get(b.icon) : undefined;
      if (!icon) return notFound(c);
      return c.body(new Uint8Array(icon.raw), 200, { 'content-type': icon.type, 'cache-control': 'public, max-age=86400' });
    }),
  );

  app.get(
    '/app/:name',
    plainRoute((c) => {
      const asset = get()?.assets.get(c.req.param('name') ?? '');
      if (!asset) return notFound(c);
      const { body, encoding } = encodingFor(c, asset);
      const headers: Record<string, string> = {
        'content-type': asset.type,
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
        vary: 'Accept-Encoding',
      };
      if (encoding) headers['content-encoding'] = encoding;
      return c.body(new Uint8Array(body), 200, headers);
    }),
  );
}

/**
 * The CSP for a page with its own inline <script> and <style> (the /docs page): the policy above,
 * widened by the SHA-256 of exactly those blocks, so no other inline code can run.
 */
export function cspWithInlineHashes(html: string): string {
  const hashes = (tag: string) =>
    Array.from(html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g')), (m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`).join(' ');
  return HTML_CSP.replace("script-src 'self'", `script-src 'self' ${hashes('script')}`).replace("style-src 'self'", `style-src 'self' ${hashes('style')}`);
}
