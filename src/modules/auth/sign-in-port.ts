// The sign-in sequence as other features may use it (platform/identity/sign-in-port.ts): the route
// table (src/routes.ts) hands this to them, so they never import auth. It runs the same steps and the same session start
// as every sign-in method here (sign-in.ts, two-factor-login.service.ts).
import type { Infra } from '../../infra.js';
import type { SignInPort } from '../../platform/identity/sign-in-port.js';
import { requireRecentAuthentication } from './reauthentication.js';
import { LoginResponse } from './schemas.js';
import { assertCanSignIn, assertNotLocked, needsSecondFactor, startSession, type SignInDeps } from './sign-in.js';
import { startTwoFactorChallenge } from './two-factor-login.service.js';

export function authSignInPort(deps: SignInDeps & Pick<Infra, 'userCache' | 'passwords'>): SignInPort {
  return {
    answerSchema: LoginResponse,
    async finish(user, client, { secondFactorProven }) {
      assertNotLocked(deps, user);
      assertCanSignIn(deps, user);
      // A first factor that is not also a second one leaves the sign-in to the two-factor ticket
      // (POST /auth/two-factor/login), as a social sign-in does.
      if (!secondFactorProven && needsSecondFactor(deps, user))
        throw await startTwoFactorChallenge(deps, user, 'webauthn');
      return startSession(deps, user, client, null, { amr: ['webauthn'] });
    },
    requireRecentAuthentication: (actor, proof) => requireRecentAuthentication(deps, actor, proof),
  };
}
