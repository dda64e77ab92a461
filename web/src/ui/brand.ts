// The product's branding on every page (APP_NAME, APP_LOGO_URL, APP_PRIMARY_COLOR from
// /app-config.json): the tab title and the accent colour, with text on it that stays readable.
import { useEffect } from 'react';
import { type Brand, DEFAULT_COLOR, useAppConfig } from '../api/app-config';

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
function textOn(hex: string): string {
  const full = hex.length === 4 ? `#${[...hex.slice(1)].map((c) => c + c).join('')}` : hex;
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(full.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
}

/** The brand, or null until /app-config.json is read; applies the title and the colour. */
export function useBrand(): Brand | null {
  const brand = useAppConfig()?.brand ?? null;
  useEffect(() => {
    if (!brand) return;
    document.title = brand.name;
    const root = document.documentElement.style;
    if (brand.primaryColor.toLowerCase() !== DEFAULT_COLOR) {
      root.setProperty('--accent', brand.primaryColor);
      root.setProperty('--accent-text', textOn(brand.primaryColor));
    }
  }, [brand]);
  return brand;
}
