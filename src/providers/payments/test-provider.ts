// The built-in test provider (no STRIPE_SECRET_KEY): checkout returns a page of this service where a
// person completes or cancels the payment; completing applies the same change a Stripe event would.
// Its state lives in memory: it is for development and demos, not for money.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { type PaymentProvider, PaymentProviderError, type ProviderSubscription } from './provider.js';

export interface TestCheckout {
  sessionId: string;
  customerId: string;
  priceId: string;
  organizationId: string;
  successUrl: string;
  cancelUrl: string;
  state: 'open' | 'complete' | 'canceled';
}

const PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

export function createTestProvider(publicApiUrl: string, clock: Clock) {
  const checkouts = new Map<string, TestCheckout>();
  const subs = new Map<string, ProviderSubscription>();
  const id = (p: string) => `${p}_test_${randomBytes(10).toString('hex')}`;

  const provider: PaymentProvider & {
    checkout(sessionId: string): TestCheckout | undefined;
    completeCheckout(sessionId: string): ProviderSubscription;
  } = {
    kind: 'test',
    createCustomer: async () => id('cus'),
    async createCheckout(input) {
      const sessionId = id('cs');
      checkouts.set(sessionId, { ...input, sessionId, state: 'open' });
      return { sessionId, url: `${publicApiUrl}/api/v1/billing/test-checkout/${sessionId}` };
    },
    createPortal: async ({ returnUrl }) => returnUrl,
    async cancelAtPeriodEnd(subscriptionId) {
      const s = subs.get(subscriptionId);
      if (!s) throw new PaymentProviderError('No such subscription');
      const updated = { ...s, cancelAtPeriodEnd: true, cancelAt: s.currentPeriodEnd };
      subs.set(subscriptionId, updated);
      return updated;
    },
    async cancelNow(subscriptionId) {
      const s = subs.get(subscriptionId);
      if (s) subs.set(subscriptionId, { ...s, status: 'canceled' });
    },
    async getSubscription(subscriptionId) {
      const s = subs.get(subscriptionId);
      if (!s) throw new PaymentProviderError('No such subscription');
      return s;
    },
    checkout: (sessionId) => checkouts.get(sessionId),
    completeCheckout(sessionId) {
      const c = checkouts.get(sessionId);
      if (!c || c.state !== 'open') throw new PaymentProviderError('This checkout is not open');
      c.state = 'complete';
      const sub: ProviderSubscription = {
        id: id('sub'),
        customerId: c.customerId,
        priceId: c.priceId,
        status: 'active',
        currentPeriodEnd: new Date(clock.now().getTime() + PERIOD_MS),
        cancelAtPeriodEnd: false,
        cancelAt: null,
        organizationId: c.organizationId,
      };
      subs.set(sub.id, sub);
      return sub;
    },
  };
  return provider;
}

export type TestProvider = ReturnType<typeof createTestProvider>;
