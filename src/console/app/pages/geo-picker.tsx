// Chooses a record's geo targets by searching countries and continents by name (GET /geo/targets
// ?q=…); the chosen ones are listed with a button each to remove them.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { get } from '../api.ts';
import type { GeoTarget } from '../types.ts';

/** Names of targets already seen, so a chosen id shows as "Germany" rather than 2921044. */
const known = new Map<number, GeoTarget>();

async function search(text: string): Promise<GeoTarget[]> {
  const query = new URLSearchParams({ limit: '20' });
  if (text.length === 2) query.set('code', text);
  else query.set('q', text);
  const found = await get<GeoTarget[]>(`/geo/targets?${query}`);
  // Two letters may be a code or part of a name ("in"): both are asked.
  const byName = text.length === 2 ? await get<GeoTarget[]>(`/geo/targets?${new URLSearchParams({ q: text, limit: '20' })}`) : [];
  const all = [...found, ...byName.filter((t) => !found.some((f) => f.id === t.id))];
  for (const t of all) known.set(t.id, t);
  return all;
}

/** Short names of geo targets ("Germany", "Europe"), looked up once for ids not yet seen. */
export function useTargetWords(ids: number[]): (target: number) => string {
  const [, setLoaded] = useState(0);
  const missing = ids.some((id) => !known.has(id));
  useEffect(() => {
    if (!missing) return;
    get<GeoTarget[]>('/geo/targets?limit=1000').then((all) => {
      for (const t of all) known.set(t.id, t);
      setLoaded((n) => n + 1);
    }, () => undefined);
  }, [missing]);
  return (target) => known.get(target)?.name ?? `GeoNames ${target}`;
}

export function GeoPicker({ value, onValue, error }: { value: number[]; onValue: (ids: number[]) => void; error?: string | undefined }) {
  const id = useId();
  const [text, setText] = useState('');
  const [results, setResults] = useState<GeoTarget[]>([]);
  const [names, setNames] = useState(0);
  const searchBox = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const wanted = text.trim();
    if (wanted.length < 2) return setResults([]);
    let live = true;
    const timer = setTimeout(() => {
      search(wanted).then(
        (found) => live && setResults(found),
        () => live && setResults([]),
      );
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text]);
  // Ids chosen before (a record being edited) are named once looked up.
  useEffect(() => {
    const unknown = value.filter((v) => !known.has(v));
    if (unknown.length === 0) return;
    get<GeoTarget[]>('/geo/targets?limit=1000').then((all) => {
      for (const t of all) known.set(t.id, t);
      setNames((n) => n + 1);
    }, () => undefined);
  }, [value]);
  const label = (target: number) => {
    const t = known.get(target);
    return t ? `${t.name} (${t.kind === 'country' ? t.code : 'continent'})` : `GeoNames ${target}`;
  };
  return (
    <fieldset class={`geo${error ? ' invalid' : ''}`} data-names={names}>
      <legend>Geo target (optional: answer only clients in these places)</legend>
      {value.length > 0 ? (
        <ul class="chips" aria-label="Chosen places">
          {value.map((target) => (
            <li key={target}>
              {label(target)}{' '}
              <button type="button" class="link" aria-label={`Remove ${label(target)}`} onClick={() => onValue(value.filter((v) => v !== target))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p class="hint">Everyone (no geo target).</p>
      )}
      <label for={id}>Search countries and continents</label>
      <input id={id} ref={searchBox} type="search" value={text} autocomplete="off" aria-describedby={`${id}-found`} onInput={(e) => setText(e.currentTarget.value)} />
      <p id={`${id}-found`} class="visually-hidden" aria-live="polite">
        {text.trim().length >= 2 ? `${results.length} places found` : ''}
      </p>
      {results.length > 0 && (
        <ul class="results" aria-label="Places found">
          {results.map((t) => (
            <li key={t.id}>
              <button type="button" class="link" disabled={value.includes(t.id)} onClick={() => (onValue([...value, t.id]), setText(''), searchBox.current?.focus())}>
                Add {t.name} ({t.kind === 'country' ? t.code : 'continent'})
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && (
        <span class="error" data-field-error="target">
          {error}
        </span>
      )}
    </fieldset>
  );
}
