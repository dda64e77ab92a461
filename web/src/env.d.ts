/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The price id of the Pro plan (STRIPE_PRICE_PRO of the API); `price_pro` when unset. */
  readonly VITE_TENANTRY_PRICE_PRO?: string;
}
