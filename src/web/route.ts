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

/** Asked before the person leaves a form that holds changes not saved (useLeaveGuard); false: stay. */
let leaveGuard: (() => boolean) | undefined;

/** Whether the person may leave now: true, or what they answer when a form holds changes not saved. */
export const mayLeave = (): boolean => !leaveGuard || leaveGuard();

/**
 * While `dirty`, leaving asks first: a link within the app (confirm `question`; no keeps the page
 * and its edits), a reload or a closed tab (the browser's own question). Back and Forward are not
 * asked (a hash change cannot be undone without losing the history's order): the form keeps its
 * draft for when the person comes back instead (recording-form.tsx).
 */
export function useLeaveGuard(dirty: boolean, question: string, discarded: () => void): void {
  useEffect(() => {
    if (!dirty) return;
    // Yes, leave and lose them: the form forgets its draft.
    const guard = () => {
      const leave = confirm(question);
      if (leave) discarded();
      return leave;
    };
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
    const on = () => setRoute(parseRoute(location.hash));
    // A click on a link within the app is asked about before the address changes, so that staying
    // leaves the history as it was.
    const onClick = (e: MouseEvent) => {
      const link = e.target instanceof Element ? e.target.closest('a[href^="#/"]') : null;
      if (!link || !leaveGuard || link.getAttribute('href') === location.hash) return;
      if (!leaveGuard()) {
        e.preventDefault();
        e.stopImmediatePropagation();
      }
    };
    addEventListener('hashchange', on);
    document.addEventListener('click', onClick, true);
    return () => {
      removeEventListener('hashchange', on);
      document.removeEventListener('click', onClick, true);
    };
  }, []);
  return route;
}
