// Hash routes (#/domains/example.org/records): the page is one document, so the server has one URL
// to serve and the browser's back button moves between views without asking it again.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'domains' }
  | { page: 'domain'; domain: string; tab: 'settings' | 'records' | 'nameservers' | 'uptime' }
  | { page: 'iplists' }
  | { page: 'certificates' }
  | { page: 'events' }
  | { page: 'webhooks' }
  | { page: 'missing'; path: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [first, second, third] = parts;
  if (!first || first === 'domains') {
    if (!second) return { page: 'domains' };
    const tab = third ?? 'settings';
    if (tab === 'settings' || tab === 'records' || tab === 'nameservers' || tab === 'uptime') return { page: 'domain', domain: second, tab };
  }
  if (parts.length === 1 && (first === 'iplists' || first === 'certificates' || first === 'events' || first === 'webhooks')) return { page: first };
  return { page: 'missing', path: parts.join('/') };
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}
