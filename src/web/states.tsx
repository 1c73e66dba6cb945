// The designed in-between states: loading, empty (saying what to do), and a failed load with Retry.
import type { ComponentChildren } from 'preact';
import { describeError } from './api';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state state-loading" role="status">
      <span class="spinner" aria-hidden="true" />
      Loading {what}…
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state state-empty">
      <p class="state-title">{title}</p>
      {children}
    </div>
  );
}

export function LoadError({ what, error, retry }: { what: string; error: unknown; retry: () => void }) {
  return (
    <div class="state state-error" role="alert">
      <p class="state-title">Could not load {what}.</p>
      <p>{describeError(error)}</p>
      <button type="button" class="button" onClick={retry}>
        Retry
      </button>
    </div>
  );
}
