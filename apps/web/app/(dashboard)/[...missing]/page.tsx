import { notFound } from 'next/navigation';

/**
 * Any path no page serves lands here, inside the dashboard's shell (navigation, who is signed
 * in), and answers 404 with the dashboard's not-found page rather than a bare one outside it.
 */
export default function MissingPage(): never {
  notFound();
}
