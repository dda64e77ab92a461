// React hooks over the API: the session's state, and a load that can be run again.
import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';
import { toProblem, type Problem } from './errors';
import { sessionStore, type SessionState } from './session';

export const useSession = (): SessionState => useSyncExternalStore(sessionStore.subscribe, sessionStore.get);

export interface Loaded<T> {
  data: T | undefined;
  problem: Problem | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `key` changes (and on reload); keeps the last data while loading again. */
export function useLoad<T>(key: string, load: () => Promise<{ data?: T; error?: unknown }>): Loaded<T> {
  const [state, setState] = useState<{ key: string; data: T | undefined; problem: Problem | null; loading: boolean }>({
    key,
    data: undefined,
    problem: null,
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ key, data: s.key === key ? s.data : undefined, problem: null, loading: true }));
    load().then(
      (r) => {
        if (!live) return;
        if (r.data !== undefined) setState({ key, data: r.data, problem: null, loading: false });
        else setState({ key, data: undefined, problem: toProblem(r.error), loading: false });
      },
      (err: unknown) => live && setState({ key, data: undefined, problem: toProblem(err), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [key, round]); // the load is a function of key
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data: state.key === key ? state.data : undefined, problem: state.problem, loading: state.loading, reload };
}
