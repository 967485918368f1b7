// The API key the customer signed in with: in this tab's sessionStorage only (never a cookie, a
// URL or localStorage), so it goes when the tab closes or the customer signs out.
const KEY = 'palisade.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function keepKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
