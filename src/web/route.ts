// Hash routing (#/recordings/rec_…): the server serves one HTML page at /, so no client path can
// shadow an API route or need a server rule of its own, and a reload keeps the page.
import { useEffect, useState } from 'preact/hooks';

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
  if (rec) return { page: 'recording', id: decodeURIComponent(rec[1]!) };
  if (path === '/devices') return { page: 'devices' };
  if (path === '/keys') return { page: 'keys' };
  if (path === '/webhooks') return { page: 'webhooks' };
  return { page: 'missing' };
}

export const href = {
  library: '#/',
  recording: (id: string) => `#/recordings/${encodeURIComponent(id)}`,
  devices: '#/devices',
  keys: '#/keys',
  webhooks: '#/webhooks',
};

export const navigate = (to: string): void => {
  location.hash = to;
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
