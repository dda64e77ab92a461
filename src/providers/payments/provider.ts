// The payment provider behind billing: Stripe through its official package, or a built-in test
// provider when STRIPE_SECRET_KEY is unset. Both feed the same state changes (billing/sync.ts).
export interface ProviderSubscription {
  id: string;
  customerId: string;
  priceId: string | null;
  status: string;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  cancelAt: Date | null;
  organizationId: string | null;
}

export interface PaymentProvider {
  kind: 'stripe' | 'test';
  createCustomer(input: { organizationId: string; name: string; email: string | null }): Promise<string>;
  createCheckout(input: {
    customerId: string;
    priceId: string;
    successUrl: string;
    cancelUrl: string;
    organizationId: string;
  }): Promise<{ sessionId: string; url: string }>;
  createPortal(input: { customerId: string; returnUrl: string }): Promise<string>;
  cancelAtPeriodEnd(subscriptionId: string): Promise<ProviderSubscription>;
  cancelNow(subscriptionId: string): Promise<void>;
  getSubscription(subscriptionId: string): Promise<ProviderSubscription>;
}

export class PaymentProviderError extends Error {}
