// The frame of every page: a skip link, the brand, and once signed in the console's navigation,
// the signed-in email and "Sign out".
import type { ReactNode } from 'react';
import { useSession } from '../api/hooks';
import { signOut } from '../api/session';
import { Link, navigate, useLocation } from '../router';
import { useBrand } from './brand';

export function Shell({ children }: { children: ReactNode }) {
  const session = useSession();
  const brand = useBrand();
  const { path } = useLocation();
  const current = (prefix: string) => (path === prefix || path.startsWith(`${prefix}/`) ? 'page' : undefined);
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" data-testid="brand">
          {brand?.logoUrl ? <img src={brand.logoUrl} alt="" className="brand-logo" height={24} /> : null}
          {brand?.name ?? ''}
        </Link>
        {session.status === 'signed-in' ? (
          <>
            <nav aria-label="Console">
              <Link to="/orgs" aria-current={current('/orgs')}>
                Organizations
              </Link>
              <Link to="/account" aria-current={current('/account')}>
                Account
              </Link>
            </nav>
            <div className="who">
              <span className="email" data-testid="signed-in-email">
                {session.user.email}
              </span>
              <button
                type="button"
                className="secondary small"
                onClick={() => {
                  void signOut().then(() => navigate('/sign-in', { replace: true }));
                }}
              >
                Sign out
              </button>
            </div>
          </>
        ) : null}
      </header>
      {children}
    </>
  );
}

/** A console page: a heading, then its sections. */
export function ConsolePage({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <main id="main" className="console">
      <div className="page-head">
        <h1>{title}</h1>
        {actions}
      </div>
      {children}
    </main>
  );
}

export function Section({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  const headingId = `${id ?? title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-heading`;
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}
