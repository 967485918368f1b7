// Webhooks: create one (its signing secret is shown once, right then), send a test event, read the
// delivery log, remove it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, get, seg } from '../api.ts';
import { EVENT_TYPES, type Delivery, type Webhook } from '../types.ts';
import { CheckField, Loading, PageTitle, ProblemNote, TextField, useAction, useLoad, when } from '../ui.tsx';

/** While a delivery is pending, the log is read again every 2 s (for at most 2 minutes) until it settles. */
const FOLLOW_EVERY_MS = 2_000;
const FOLLOW_FOR_MS = 120_000;

function useFollowPending(pending: boolean, reload: () => void): void {
  const started = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!pending) {
      started.current = undefined;
      return;
    }
    started.current ??= Date.now();
    if (Date.now() - started.current > FOLLOW_FOR_MS) return;
    const timer = setTimeout(reload, FOLLOW_EVERY_MS);
    return () => clearTimeout(timer);
  });
}

function Deliveries({ hook }: { hook: Webhook }) {
  const log = useLoad(() => get<Delivery[]>(`/me/webhooks/${seg(hook.id)}/deliveries?limit=50`), [hook.id]);
  useFollowPending(log.data?.some((d) => d.state === 'pending') ?? false, log.reload);
  return (
    <div class="deliveries">
      <h3>Delivery log</h3>
      <button type="button" class="secondary" onClick={log.reload}>
        Refresh log
      </button>
      <ProblemNote problem={log.problem} />
      {!log.data && !log.problem && <Loading what="deliveries" />}
      {log.data && log.data.length === 0 && <p class="empty">Nothing sent yet: send a test event.</p>}
      {log.data && log.data.length > 0 && (
        <div class="table-wrap">
          <table class="delivery-log">
            <caption class="visually-hidden">Deliveries to {hook.url}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {log.data.map((d) => (
                <tr key={d.id} data-state={d.state}>
                  <td>
                    {d.event.type}
                    {d.event.domain && ` (${d.event.domain})`} — {when(d.event.created)}
                  </td>
                  <td>
                    {d.state}
                    {d.next_attempt && `, next try ${when(d.next_attempt)}`}
                  </td>
                  <td>
                    <ul>
                      {d.attempts.map((a) => (
                        <li key={a.at}>
                          {when(a.at)}: {a.status ? `HTTP ${a.status}` : (a.error ?? 'no answer')} in {a.ms} ms
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function HookCard({ hook, onChanged }: { hook: Webhook; onChanged: () => void }) {
  const action = useAction();
  const [showLog, setShowLog] = useState(false);
  const [round, setRound] = useState(0);
  const test = async () => {
    if (await action.run(() => api('POST', `/me/webhooks/${seg(hook.id)}/test`))) {
      setShowLog(true);
      setRound((r) => r + 1);
    }
  };
  const remove = async () => {
    if (!confirm(`Remove the webhook to ${hook.url}?`)) return;
    if (await action.run(async () => (await api('DELETE', `/me/webhooks/${seg(hook.id)}`), true))) onChanged();
  };
  return (
    <article class="card" aria-labelledby={`hook-${hook.id}`}>
      <h2 id={`hook-${hook.id}`}>{hook.url}</h2>
      {hook.description && <p>{hook.description}</p>}
      <p>Events: {hook.events.length ? hook.events.join(', ') : 'all'}</p>
      <div class="actions">
        <button type="button" onClick={test} disabled={action.busy}>
          Send a test event
        </button>
        <button type="button" class="secondary" aria-expanded={showLog} onClick={() => setShowLog(!showLog)}>
          {showLog ? 'Hide delivery log' : 'Show delivery log'}
        </button>
        <button type="button" class="danger" onClick={remove} disabled={action.busy}>
          Remove
        </button>
      </div>
      <ProblemNote problem={action.problem} />
      {showLog && <Deliveries key={round} hook={hook} />}
    </article>
  );
}

function NewHook({ onAdded }: { onAdded: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const made = await action.run(() => api<Webhook>('POST', '/me/webhooks', { url: url.trim(), events, description }));
    if (made) {
      setSecret(made.secret ?? null);
      setUrl('');
      setDescription('');
      setEvents([]);
      onAdded();
    }
  };
  return (
    <section aria-labelledby="new-hook">
      <h2 id="new-hook">New webhook</h2>
      {secret && (
        <div class="secret" role="alert">
          <p>
            <strong>The webhook's signing secret, shown only now:</strong> <code id="webhook-secret">{secret}</code>
          </p>
          <p>Keep it: each delivery's X-Palisade-Signature is an HMAC-SHA256 of its body with this key.</p>
          <button type="button" class="secondary" onClick={() => setSecret(null)}>
            I have kept it
          </button>
        </div>
      )}
      <form onSubmit={submit} class="grid">
        <TextField label="Receiver URL" name="url" value={url} onValue={setUrl} required placeholder="https://hooks.example.org/palisade" problem={action.problem} />
        <TextField label="Description" name="description" value={description} onValue={setDescription} problem={action.problem} />
        <fieldset class="events">
          <legend>Events sent (none ticked: all)</legend>
          {EVENT_TYPES.map((type) => (
            <CheckField key={type} label={type} name="events" checked={events.includes(type)} onValue={(on) => setEvents(on ? [...events, type] : events.filter((t) => t !== type))} />
          ))}
        </fieldset>
        <ProblemNote problem={action.problem} shown={['url', 'description', 'events']} />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Create webhook
          </button>
        </div>
      </form>
    </section>
  );
}

export function WebhooksPage() {
  const hooks = useLoad(() => get<Webhook[]>('/me/webhooks'), []);
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <p>Palisade POSTs your events to these URLs, signed with each webhook's secret.</p>
      <ProblemNote problem={hooks.problem} />
      {!hooks.data && !hooks.problem && <Loading what="webhooks" />}
      {hooks.data && hooks.data.length === 0 && <p class="empty">No webhooks yet. Create one below to be told when a backend goes down.</p>}
      {hooks.data?.map((h) => <HookCard key={h.id} hook={h} onChanged={hooks.reload} />)}
      <NewHook onAdded={hooks.reload} />
    </>
  );
}
