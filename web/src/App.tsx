// The route table. Pages of mailed links and sign-in are open to everyone; the console needs a
// session and sends a signed-out visitor to /sign-in, coming back after.
import { useEffect, type ReactNode } from 'react';
import { useSession } from './api/hooks';
import { startSession } from './api/session';
import { match, navigate, safeNext, useLocation } from './router';
import { Shell } from './ui/Shell';
import { AuthCallback } from './pages/auth/Callback';
import { ConfirmEmail } from './pages/auth/ConfirmEmail';
import { AcceptInvitation } from './pages/auth/Invitation';
import { ForgotPassword, MagicLink, ResetPassword, VerifyEmail } from './pages/auth/MailedLinks';
import { SignIn } from './pages/auth/SignIn';
import { SignUp } from './pages/auth/SignUp';
import { Account } from './pages/console/Account';
import { Organizations } from './pages/console/Organizations';
import { OrgConsole } from './pages/console/OrgConsole';

type Page = (params: Record<string, string>) => ReactNode;

const OPEN: Array<[string, Page]> = [
  ['/verify-email', () => <VerifyEmail />],
  ['/reset-password', () => <ResetPassword />],
  ['/forgot-password', () => <ForgotPassword />],
  ['/magic-link', () => <MagicLink />],
  ['/confirm-email', () => <ConfirmEmail />],
  ['/invitations/accept', () => <AcceptInvitation />],
  ['/auth/callback', () => <AuthCallback />],
];
const SIGNED_OUT: Array<[string, Page]> = [
  ['/sign-in', () => <SignIn />],
  ['/sign-up', () => <SignUp />],
];
const CONSOLE: Array<[string, Page]> = [
  ['/account', () => <Account />],
  ['/orgs', () => <Organizations />],
  ['/orgs/:orgId', (p) => <OrgConsole orgId={p.orgId!} tab="projects" />],
  [
    '/orgs/:orgId/webhooks/:endpointId',
    (p) => <OrgConsole orgId={p.orgId!} tab="webhooks" endpointId={p.endpointId!} />,
  ],
  ['/orgs/:orgId/:tab', (p) => <OrgConsole orgId={p.orgId!} tab={p.tab!} />],
];

function find(table: Array<[string, Page]>, path: string): ReactNode | null {
  for (const [pattern, page] of table) {
    const params = match(pattern, path);
    if (params) return page(params);
  }
  return null;
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Routes() {
  const session = useSession();
  const { path, query } = useLocation();
  if (session.status === 'loading') {
    return (
      <main id="main" className="auth">
        <p role="status">Loading…</p>
      </main>
    );
  }
  const open = find(OPEN, path);
  if (open) return open;
  const signedIn = session.status === 'signed-in';
  const signedOutPage = find(SIGNED_OUT, path);
  if (signedOutPage) return signedIn ? <Redirect to={safeNext(query.get('next'))} /> : signedOutPage;
  if (!signedIn) {
    const here = path === '/' ? '' : `?next=${encodeURIComponent(path + window.location.search)}`;
    return <Redirect to={`/sign-in${here}`} />;
  }
  if (path === '/') return <Redirect to="/orgs" />;
  return (
    find(CONSOLE, path) ?? (
      <main id="main" className="console">
        <h1>Page not found</h1>
        <p>There is no page at {path}.</p>
      </main>
    )
  );
}

export function App() {
  useEffect(() => void startSession(), []);
  return (
    <Shell>
      <Routes />
    </Shell>
  );
}
