'use client';

import { useState } from 'react';
import { THEME_COOKIE, THEMES, type Theme } from '../../lib/theme/theme';

const LABELS: Record<Theme, string> = { system: 'System', light: 'Light', dark: 'Dark' };
const ONE_YEAR_S = 365 * 24 * 3600;

/**
 * ThemeToggle switches the dashboard between the system's colour scheme, light and dark, at
 * once (html[data-theme]) and for later visits (a cookie the root layout reads).
 */
export function ThemeToggle({ initial }: { initial: Theme }) {
  const [theme, setTheme] = useState<Theme>(initial);
  const choose = (next: Theme) => {
    setTheme(next);
    const root = document.documentElement;
    if (next === 'system') root.removeAttribute('data-theme');
    else root.dataset.theme = next;
    document.cookie =
      next === 'system'
        ? `${THEME_COOKIE}=; path=/; max-age=0; samesite=lax`
        : `${THEME_COOKIE}=${next}; path=/; max-age=${ONE_YEAR_S}; samesite=lax`;
  };
  return (
    <label className="theme">
      Theme
      <select value={theme} onChange={(e) => choose(e.target.value as Theme)}>
        {THEMES.map((t) => (
          <option key={t} value={t}>
            {LABELS[t]}
          </option>
        ))}
      </select>
    </label>
  );
}
