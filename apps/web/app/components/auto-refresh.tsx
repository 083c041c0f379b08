'use client';

import { useRouter } from 'next/navigation';
import { useEffect } from 'react';

/** AutoRefresh re-renders the server page every few seconds (live counts) while the tab is visible. */
export function AutoRefresh({ seconds }: { seconds: number }) {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') router.refresh();
    }, seconds * 1000);
    return () => clearInterval(timer);
  }, [router, seconds]);
  return null;
}
