import type { ReactNode } from 'react';

export const metadata = { title: 'Cubicle', description: 'Computer-use sandboxes for AI agents' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: 'system-ui, sans-serif', margin: '2rem', color: '#111' }}>
        {children}
      </body>
    </html>
  );
}
