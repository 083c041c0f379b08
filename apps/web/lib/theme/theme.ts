/**
 * The dashboard's theme choice: `system` follows prefers-color-scheme; `light` and `dark`
 * override it. Kept in a cookie (not localStorage) so the server renders html[data-theme] with
 * the first byte and a dark page never flashes light.
 */
export const THEME_COOKIE = 'cubicle_theme';
export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

/** themeOf reads a cookie value; anything else (absent, tampered) is `system`. */
export function themeOf(value: string | undefined): Theme {
  return value === 'light' || value === 'dark' ? value : 'system';
}
