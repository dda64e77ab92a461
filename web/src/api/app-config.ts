// What the service serving these pages offers (GET /app-config.json, written by the API process from
// its configuration): the sign-in methods, so that a button is shown only for a method that works.
// Read once per page load; without an answer (an old server, a dev proxy) every method is assumed.
import { useEffect, useState } from 'react';

export interface Brand {
  name: string;
  logoUrl: string | null;
  primaryColor: string;
  supportEmail: string | null;
}

export interface AppConfig {
  signIn: { password: boolean; magicLink: boolean; google: boolean; github: boolean };
  /** The product's name, logo, colour and support address (APP_NAME, …). */
  brand: Brand;
}

/** The colour the stylesheet was made with: a brand that keeps it keeps the dark theme's own accent too. */
export const DEFAULT_COLOR = '#2f5bd3';
const DEFAULT_BRAND: Brand = { name: 'Tenantry', logoUrl: null, primaryColor: DEFAULT_COLOR, supportEmail: null };
const EVERYTHING: AppConfig = {
  signIn: { password: true, magicLink: true, google: true, github: true },
  brand: DEFAULT_BRAND,
};
let loaded: Promise<AppConfig> | null = null;

function load(): Promise<AppConfig> {
  loaded ??= fetch('/app-config.json', { headers: { accept: 'application/json' } })
    .then(async (res) => {
      const body = (await res.json()) as Partial<AppConfig>;
      return res.ok && body.signIn
        ? { signIn: { ...EVERYTHING.signIn, ...body.signIn }, brand: { ...DEFAULT_BRAND, ...body.brand } }
        : EVERYTHING;
    })
    .catch(() => EVERYTHING);
  return loaded;
}

/** The configuration, or null until it is known. */
export function useAppConfig(): AppConfig | null {
  const [config, setConfig] = useState<AppConfig | null>(null);
  useEffect(() => {
    let live = true;
    void load().then((c) => live && setConfig(c));
    return () => {
      live = false;
    };
  }, []);
  return config;
}
