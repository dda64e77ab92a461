// A small router over the History API: the current path and query as React state, links that
// navigate without reloading, and path patterns with :params. The pages are few and flat, so this
// is all the routing the app needs (docs/decisions.md, "Web app").
import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());
window.addEventListener('popstate', notify);

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

const locationKey = () => window.location.pathname + window.location.search + window.location.hash;

/** The current location; re-renders on navigation. */
export function useLocation() {
  useSyncExternalStore(subscribe, locationKey);
  return {
    path: window.location.pathname,
    query: new URLSearchParams(window.location.search),
    hash: window.location.hash,
  };
}

// The tokens of mailed links read on this page load, by path: kept here once the address bar no
// longer shows them, so a page that renders again still has its token.
const mailedTokens = new Map<string, string>();

/**
 * The `token` of the mailed link this page was opened with. It is read once and then dropped from
 * the address bar (history.replaceState): a live token must not stay in the browser's history, be
 * sent again by a reload (and land in a server's log), or be seen over a shoulder.
 */
export function useMailedToken(): string | null {
  const { path, query } = useLocation();
  const inAddress = query.get('token');
  if (inAddress !== null) mailedTokens.set(path, inAddress);
  useEffect(() => {
    const url = new URL(window.location.href);
    if (!url.searchParams.has('token')) return;
    url.searchParams.delete('token');
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  });
  return inAddress ?? mailedTokens.get(path) ?? null;
}

export function navigate(to: string, { replace = false } = {}) {
  if (replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.scrollTo(0, 0);
  notify();
}

/** A path inside this app for a `next` parameter: relative, never another origin. */
export function safeNext(next: string | null, fallback = '/'): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : fallback;
}

/** The params of `pattern` (`/orgs/:orgId/projects`) in `path`, or null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(h);
    else if (w !== h) return null;
  }
  return params;
}

export function Link({
  to,
  children,
  ...rest
}: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} {...rest} onClick={onClick}>
      {children}
    </a>
  );
}
