// Domains: the list (filtered by tag, a page at a time) and the form to add one.
import { useState } from 'preact/hooks';
import { api, page, type Page } from '../api.ts';
import { href } from '../router.ts';
import type { Domain } from '../types.ts';
import { Loading, PageTitle, ProblemNote, splitList, TextField, useAction, useLoad } from '../ui.tsx';

const PAGE_SIZE = 100;

function listPath(tag: string): string {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (tag) query.set('tag', tag);
  return `/domains?${query}`;
}

function AddDomain({ onAdded }: { onAdded: () => void }) {
  const [domain, setDomain] = useState('');
  const [backend, setBackend] = useState('');
  const [tags, setTags] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const added = await action.run(() => api<Domain>('POST', '/domains', { domain: domain.trim(), backend: backend.trim(), tags: splitList(tags) }));
    if (added) {
      setDomain('');
      setBackend('');
      setTags('');
      onAdded();
      location.hash = href('domains', added.domain, 'records');
    }
  };
  return (
    <section aria-labelledby="add-domain">
      <h2 id="add-domain">Add a domain</h2>
      <form onSubmit={submit} class="grid">
        <TextField label="Domain" name="domain" value={domain} onValue={setDomain} required placeholder="example.org" problem={action.problem} />
        <TextField label="Backend (IP address, optional port)" name="backend" value={backend} onValue={setBackend} required placeholder="192.0.2.1:8080" problem={action.problem} />
        <TextField label="Tags (comma-separated)" name="tags" value={tags} onValue={setTags} problem={action.problem} />
        <ProblemNote problem={action.problem} shown={['domain', 'backend', 'tags']} />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Add domain
          </button>
        </div>
      </form>
    </section>
  );
}

export function DomainsPage() {
  const [tag, setTag] = useState('');
  const [filter, setFilter] = useState('');
  // The pages seen so far, so "Previous" goes back without the API keeping any state.
  const [trail, setTrail] = useState<string[]>([]);
  const path = trail[trail.length - 1] ?? listPath(filter);
  const list = useLoad<Page<Domain>>(() => page<Domain>(path), [path]);
  const applyFilter = (event: Event) => {
    event.preventDefault();
    setTrail([]);
    setFilter(tag.trim());
  };
  return (
    <>
      <PageTitle>Domains</PageTitle>
      <form role="search" onSubmit={applyFilter} class="inline">
        <TextField label="Filter by tag" name="tag" value={tag} onValue={setTag} />
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <ProblemNote problem={list.problem} />
      {!list.data && !list.problem && <Loading what="domains" />}
      {list.data && list.data.items.length === 0 && (
        <p class="empty">{filter ? `No domain carries the tag “${filter}”.` : 'You have no domains yet. Add one below: its name and the backend the edge should send its visitors to.'}</p>
      )}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table id="domain-list">
            <caption class="visually-hidden">Your domains</caption>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Backend</th>
                <th scope="col">Tags</th>
                <th scope="col">Protection</th>
                <th scope="col">Name servers</th>
                <th scope="col">Records</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((d) => (
                <tr key={d.domain}>
                  <th scope="row">
                    <a href={href('domains', d.domain)}>{d.domain}</a>
                  </th>
                  <td>{d.backend}</td>
                  <td>{d.tags.join(', ')}</td>
                  <td>{d.enabled ? 'on' : 'DNS only'}</td>
                  <td>{d.ns_active ? 'active' : 'not active'}</td>
                  <td>
                    <a href={href('domains', d.domain, 'records')} aria-label={`${d.records} records of ${d.domain}`}>
                      {d.records}
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Pages of domains" class="pager">
        <button type="button" class="secondary" disabled={trail.length === 0} onClick={() => setTrail(trail.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!list.data?.next} onClick={() => list.data?.next && setTrail([...trail, list.data.next])}>
          Next page
        </button>
      </nav>
      <AddDomain onAdded={list.reload} />
    </>
  );
}

