// What the service serving these pages offers (GET /app-config.json, written by the API process from
// its configuration): the sign-in methods, so that a button is shown only for a method that works.
// Read once per page load; without an answer (an old server, a dev proxy) every method is assumed.
import { useEffect, useState } from 'react';

export interface AppConfig {
  signIn: { password: boolean; magicLink: boolean; google: boolean; github: boolean };
}

const EVERYTHING: AppConfig = { signIn: { password: true, magicLink: true, google: true, github: true } };
let loaded: Promise<AppConfig> | null = null;

function load(): Promise<AppConfig> {
  loaded ??= fetch('/app-config.json', { headers: { accept: 'application/json' } })
    .then(async (res) => {
      const body = (await res.json()) as Partial<AppConfig>;
      return res.ok && body.signIn ? { signIn: { ...EVERYTHING.signIn, ...body.signIn } } : EVERYTHING;
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
