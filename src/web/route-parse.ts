// What a hash (#/recordings/rec_…) names: no DOM or Preact here, so the node tests read it as it is.
export type Route =
  | { page: 'library' }
  | { page: 'recording'; id: string }
  | { page: 'devices' }
  | { page: 'keys' }
  | { page: 'webhooks' }
  | { page: 'missing' };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/') return { page: 'library' };
  const rec = /^\/recordings\/([^/]+)$/.exec(path);
  if (rec) {
    try {
      return { page: 'recording', id: decodeURIComponent(rec[1]!) };
    } catch {
      return { page: 'missing' }; // a malformed escape (%E0%A4%A) names no recording
    }
  }
  if (path === '/devices') return { page: 'devices' };
  if (path === '/keys') return { page: 'keys' };
  if (path === '/webhooks') return { page: 'webhooks' };
  return { page: 'missing' };
}
