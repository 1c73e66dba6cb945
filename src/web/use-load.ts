// Loading data for a page: the value, the error, a reload; results of a superseded load are dropped.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  value: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  set: (value: T) => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    load().then(
      (v) => {
        if (mine !== generation.current) return;
        setValue(v);
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== generation.current) return;
        setError(e);
        setLoading(false);
      },
    );
    // The caller names the inputs that make a new load (as useEffect deps).
  }, deps);
  useEffect(run, [run]);
  return { value, error, loading, reload: run, set: setValue };
}
