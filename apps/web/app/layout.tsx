import { cookies } from 'next/headers';
import type { ReactNode } from 'react';
import { THEME_COOKIE, themeOf } from '../lib/theme/theme';
import './globals.css';

export const metadata = { title: 'Cubicle', description: 'Computer-use sandboxes for AI agents' };

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = themeOf((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <html lang="en" {...(theme === 'system' ? {} : { 'data-theme': theme })}>
      <body>{children}</body>
    </html>
  );
}
