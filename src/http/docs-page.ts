// /docs: a self-contained interactive reference (no CDN: reclib runs offline at home). It reads
// the OpenAPI documents and lets a user send a request with their key from the browser.
export const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>reclib API reference</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{background:#20242c;color:#fff;padding:12px 20px;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
header input{flex:1;min-width:240px;padding:6px;font:inherit}
main{max-width:1000px;margin:0 auto;padding:12px 20px}
details{background:#fff;border:1px solid #ddd;border-radius:6px;margin:6px 0}
summary{cursor:pointer;padding:8px 12px;font-family:ui-monospace,monospace}
.m{display:inline-block;width:64px;font-weight:700}.get{color:#0a7}.post{color:#06c}.patch,.put{color:#b70}.delete{color:#c22}
.body{padding:0 12px 12px}pre{background:#f3f3f3;padding:8px;overflow:auto;max-height:360px}
textarea{width:100%;min-height:90px;font-family:ui-monospace,monospace}label{display:block;margin-top:6px}
</style></head><body>
<header><strong>reclib API</strong>
<select id="ver"><option value="v2">v2 (current)</option><option value="v1">v1 (compatibility)</option></select>
<input id="token" placeholder="Bearer token: rlk_… API key or rls_… session (kept in this tab only)" autocomplete="off">
</header><main id="ops">Loading…</main>
<script>
const $ = (t, a = {}, ...kids) => { const e = document.createElement(t); Object.assign(e, a); e.append(...kids); return e; };
// Streams opened with Send: stopped when the page is built again (another version), whose Stop
// buttons would be gone.
const open = new Set();
async function load() {
  for (const ctl of open) ctl.abort();
  open.clear();
  const ver = document.getElementById('ver').value;
  const doc = await (await fetch('/api/' + ver + '/openapi.json')).json();
  const main = document.getElementById('ops'); main.textContent = '';
  main.append($('p', {}, doc.info.title + ' ' + doc.info.version + ' — ' + (doc.info.description || '')));
  for (const [path, item] of Object.entries(doc.paths)) {
    const base = ((item.servers && item.servers[0].url) || doc.servers[0].url).replace(/\\/$/, ''); // '/' (POST /mcp) + path
    for (const [method, op] of Object.entries(item)) {
      if (method === 'servers') continue;
      const d = $('details'), s = $('summary');
      s.append($('span', { className: 'm ' + method, textContent: method.toUpperCase() }), base + path + '  ', $('small', { textContent: op.summary }));
      const body = $('div', { className: 'body' });
      if (op.description) body.append($('p', { textContent: op.description }));
      const inputs = {};
      for (const p of op.parameters || []) {
        const i = $('input', { placeholder: p.in + (p.required ? ', required' : '') });
        inputs[p.in + ':' + p.name] = i; body.append($('label', {}, p.name + ' ', i));
      }
      let ta;
      if (op.requestBody) {
        const sch = op.requestBody.content['application/json'].schema;
        body.append($('label', {}, 'JSON body'), $('pre', { textContent: JSON.stringify(sch, null, 1) }), ta = $('textarea', { value: '{}' }));
      }
      const out = $('pre');
      let streaming = null;
      const show = (text) => { out.textContent = text.length > 200000 ? '…' + text.slice(-200000) : text; };
      const btn = $('button', { textContent: 'Send', onclick: async () => {
        if (streaming) { streaming.abort(); return; }
        let url = base + path; const q = new URLSearchParams(); const headers = {};
        for (const [k, i] of Object.entries(inputs)) { if (!i.value) continue; const [where, n] = k.split(':');
          if (where === 'path') url = url.replace('{' + n + '}', encodeURIComponent(i.value));
          else if (where === 'query') q.set(n, i.value); else headers[n] = i.value; }
        const tok = document.getElementById('token').value.trim(); if (tok) headers.authorization = 'Bearer ' + tok;
        if (ta) headers['content-type'] = 'application/json';
        const ctl = new AbortController();
        let res;
        try { res = await fetch(url + (q.toString() ? '?' + q : ''), { method: method.toUpperCase(), headers, body: ta ? ta.value : undefined, signal: ctl.signal }); }
        catch (e) { out.textContent = String(e); return; }
        // The headers a client needs next: the ETag for If-Match, where it was created, the limits.
        const shownHeaders = ['etag', 'location', 'idempotent-replayed', 'ratelimit-limit', 'ratelimit-remaining', 'retry-after', 'x-request-id']
          .filter((h) => res.headers.get(h) !== null).map((h) => h + ': ' + res.headers.get(h)).join('\\n');
        const head = res.status + ' ' + res.statusText + '\\n' + shownHeaders + '\\n\\n';
        if ((res.headers.get('content-type') || '').startsWith('text/event-stream') && res.body) {
          // A stream never ends: its events are shown as they come, until Stop.
          streaming = ctl; open.add(ctl); btn.textContent = 'Stop'; out.textContent = head;
          const reader = res.body.getReader(); const dec = new TextDecoder();
          try { for (;;) { const { done, value } = await reader.read(); if (done) break; show(out.textContent + dec.decode(value, { stream: true })); } }
          catch {} finally { streaming = null; open.delete(ctl); btn.textContent = 'Send'; }
          return;
        }
        const text = await res.text(); let shown = text; try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch {}
        out.textContent = head + shown;
      } });
      body.append(btn, out, $('details', {}, $('summary', { textContent: 'responses' }), $('pre', { textContent: JSON.stringify(op.responses, null, 1) })));
      d.append(s, body); main.append(d);
    }
  }
}
document.getElementById('ver').onchange = load; load();
</script></body></html>`;
