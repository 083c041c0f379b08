import type { ReactNode } from 'react';
import './globals.css';

export const metadata = { title: 'Cubicle', description: 'Computer-use sandboxes for AI agents' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
