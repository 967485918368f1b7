// Events: what happened to the account's domains (backend down and recovered, certificates,
// delegation, ownership), newest first, a page at a time.
import { useState } from 'preact/hooks';
import { page, type Page } from '../api.ts';
import { eventDetails } from '../event-words.ts';
import type { PalisadeEvent } from '../types.ts';
import { Loading, PageTitle, ProblemNote, useLoad, when } from '../ui.tsx';

export function EventsPage() {
  const [trail, setTrail] = useState<string[]>([]);
  const path = trail[trail.length - 1] ?? '/me/events?limit=50';
  const events = useLoad<Page<PalisadeEvent>>(() => page<PalisadeEvent>(path), [path]);
  return (
    <>
      <PageTitle>Events</PageTitle>
      <button type="button" class="secondary" onClick={events.reload}>
        Refresh
      </button>
      <ProblemNote problem={events.problem} />
      {!events.data && !events.problem && <Loading what="events" />}
      {events.data && events.data.items.length === 0 && <p class="empty">Nothing has happened yet. Events appear here when a backend goes down or recovers, a certificate fails, or a delegation changes; a webhook sends them to you.</p>}
      {events.data && events.data.items.length > 0 && (
        <div class="table-wrap">
          <table id="event-list">
            <caption class="visually-hidden">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Domain</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {events.data.items.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.created)}</td>
                  <td>{e.type}</td>
                  <td>{e.domain ?? '—'}</td>
                  <td>{eventDetails(e.data)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Pages of events" class="pager">
        <button type="button" class="secondary" disabled={trail.length === 0} onClick={() => setTrail(trail.slice(0, -1))}>
          Newer
        </button>
        <button type="button" class="secondary" disabled={!events.data?.next} onClick={() => events.data?.next && setTrail([...trail, events.data.next])}>
          Older
        </button>
      </nav>
    </>
  );
}
