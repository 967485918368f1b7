// Small building blocks every page uses: labelled fields that show the API's error for them,
// a problem note, loading of data, times in words.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useState } from 'preact/hooks';
import { Problem } from './api.ts';

/** Data a page loads; `reload` fetches again (after a change, or to follow a task). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; problem: Problem | undefined; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (value) => live && (setData(value), setProblem(undefined)),
      (error: unknown) => live && setProblem(asProblem(error)),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { data, problem, reload: useCallback(() => setRound((r) => r + 1), []) };
}

export function asProblem(error: unknown): Problem {
  return error instanceof Problem ? error : new Problem(0, 'CLIENT', error instanceof Error ? error.message : String(error));
}

/** Runs a change; keeps its problem for the form to show at its fields. Nothing typed is cleared on failure. */
export function useAction(): { busy: boolean; problem: Problem | undefined; run: <T>(work: () => Promise<T>) => Promise<T | undefined>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);
  const run = useCallback(async <T,>(work: () => Promise<T>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      return await work();
    } catch (error) {
      setProblem(asProblem(error));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, problem, run, clear: useCallback(() => setProblem(undefined), []) };
}

interface FieldProps {
  label: string;
  /** The API's field name: its error from the problem document is shown under the input. */
  name: string;
  problem?: Problem | undefined;
  hint?: string;
  children: (props: { id: string; name: string; 'aria-invalid': boolean; 'aria-describedby': string | undefined }) => ComponentChildren;
}

export function Field({ label, name, problem, hint, children }: FieldProps) {
  const id = useId();
  const error = problem?.fieldMessage(name);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, name, 'aria-invalid': Boolean(error), 'aria-describedby': described })}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {error && (
        <span id={`${id}-error`} class="error" data-field-error={name}>
          {error}
        </span>
      )}
    </div>
  );
}

export function TextField(props: { label: string; name: string; value: string; onValue: (v: string) => void; problem?: Problem | undefined; hint?: string; type?: 'text' | 'password' | 'search' | 'url'; required?: boolean; placeholder?: string; autocomplete?: string }) {
  return (
    <Field label={props.label} name={props.name} problem={props.problem} hint={props.hint}>
      {(a) => (
        <input {...a} type={(props.type ?? 'text') as 'text'} value={props.value} required={props.required} placeholder={props.placeholder} autocomplete={props.autocomplete ?? 'off'} onInput={(e) => props.onValue(e.currentTarget.value)} />
      )}
    </Field>
  );
}

export function CheckField(props: { label: string; name: string; checked: boolean; onValue: (v: boolean) => void; problem?: Problem | undefined }) {
  const id = useId();
  const error = props.problem?.fieldMessage(props.name);
  return (
    <div class={`field check${error ? ' invalid' : ''}`}>
      <input id={id} name={props.name} type="checkbox" checked={props.checked} aria-invalid={Boolean(error)} aria-describedby={error ? `${id}-error` : undefined} onChange={(e) => props.onValue(e.currentTarget.checked)} />
      <label for={id}>{props.label}</label>
      {error && (
        <span id={`${id}-error`} class="error" data-field-error={props.name}>
          {error}
        </span>
      )}
    </div>
  );
}

export function SelectField<T extends string | number>(props: { label: string; name: string; value: T; options: Array<[T, string]>; onValue: (v: T) => void; problem?: Problem | undefined }) {
  return (
    <Field label={props.label} name={props.name} problem={props.problem}>
      {(a) => (
        <select
          {...a}
          value={String(props.value)}
          onChange={(e) => {
            const picked = props.options.find(([v]) => String(v) === e.currentTarget.value);
            if (picked) props.onValue(picked[0]);
          }}
        >
          {props.options.map(([v, text]) => (
            <option key={String(v)} value={String(v)}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** The API's refusal in words, with the field errors no field of the form shows. */
export function ProblemNote({ problem, shown = [] }: { problem: Problem | undefined; shown?: string[] }) {
  if (!problem) return null;
  const elsewhere = problem.errors.filter((e) => !shown.some((f) => e.field === f || e.field.startsWith(`${f}.`)));
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{problem.status === 0 ? 'Not sent' : 'Not done'}:</strong> {problem.message}
      </p>
      {elsewhere.length > 0 && (
        <ul>
          {elsewhere.map((e) => (
            <li key={e.field}>
              {e.field}: {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function PageTitle({ children }: { children: ComponentChildren }) {
  useEffect(() => {
    const text = typeof children === 'string' ? children : '';
    if (text) document.title = `${text} · Palisade console`;
  }, [children]);
  return <h1 tabIndex={-1} id="page-title">{children}</h1>;
}

/** Splits "a, b c" into ["a", "b", "c"] (tags, lists of codes). */
export const splitList = (text: string) => text.split(/[\s,]+/).filter(Boolean);
