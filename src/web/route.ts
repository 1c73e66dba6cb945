// Hash routing (#/recordings/rec_…): the server serves one HTML page at /, so no client path can
// shadow an API route or need a server rule of its own, and a reload keeps the page.
import { useEffect, useState } from 'preact/hooks';
import { parseRoute, type Route } from './route-parse';

export { parseRoute, type Route };

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

/** Asked before the route changes while a form holds changes not saved (useLeaveGuard); false: stay. */
let leaveGuard: (() => boolean) | undefined;

/** Leaves for `to` without asking (the recording was just deleted: its unsaved edits went with it). */
export const navigateWithoutAsking = (to: string): void => {
  leaveGuard = undefined;
  navigate(to);
};

/**
 * While `dirty`, leaving the page asks first: a link or Back within the app (confirm `question`;
 * no keeps the page and its edits) and a reload or closed tab (the browser's own question).
 */
export function useLeaveGuard(dirty: boolean, question: string): void {
  useEffect(() => {
    if (!dirty) return;
    const guard = () => confirm(question);
    leaveGuard = guard;
    const beforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    addEventListener('beforeunload', beforeUnload);
    return () => {
      if (leaveGuard === guard) leaveGuard = undefined;
      removeEventListener('beforeunload', beforeUnload);
    };
  }, [dirty, question]);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    let current = location.hash;
    const on = () => {
      if (location.hash === current) return;
      if (leaveGuard && !leaveGuard()) {
        // Stay: the address goes back to this page (without another hashchange).
        history.replaceState(null, '', current || '#/');
        return;
      }
      current = location.hash;
      setRoute(parseRoute(location.hash));
    };
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
