// IP lists: the edge refuses the clients they hold. Create a list, add or remove one address or
// prefix at a time, choose the nodes it applies on, remove the list.
import { useState } from 'preact/hooks';
import { api, get, page, seg } from '../api.ts';
import type { EdgeNode, IpList } from '../types.ts';
import { CheckField, Loading, PageTitle, ProblemNote, splitList, TextField, useAction, useLoad } from '../ui.tsx';

function NodesChoice({ nodes, allnodes, chosen, onValue }: { nodes: EdgeNode[]; allnodes: boolean; chosen: number[]; onValue: (allnodes: boolean, chosen: number[]) => void }) {
  return (
    <fieldset>
      <legend>Where it applies</legend>
      <CheckField label="On every edge node" name="allnodes" checked={allnodes} onValue={(on) => onValue(on, chosen)} />
      {!allnodes &&
        nodes.map((n) => (
          <CheckField key={n.id} label={`${n.name} (${n.location})`} name="nodes" checked={chosen.includes(n.id)} onValue={(on) => onValue(false, on ? [...chosen, n.id] : chosen.filter((id) => id !== n.id))} />
        ))}
    </fieldset>
  );
}

function ListCard({ list, nodes, onChanged }: { list: IpList; nodes: EdgeNode[]; onChanged: () => void }) {
  const [entry, setEntry] = useState('');
  const action = useAction();
  const base = `/security/iplist/${list.id}`;
  const add = async (event: Event) => {
    event.preventDefault();
    const done = await action.run(async () => (await api('PUT', `${base}/${seg(entry.trim())}`), true));
    if (done) {
      setEntry('');
      onChanged();
    }
  };
  const change = async (work: () => Promise<unknown>) => {
    if ((await action.run(async () => (await work(), true))) === true) onChanged();
  };
  return (
    <article class="card" aria-labelledby={`list-${list.id}`}>
      <h2 id={`list-${list.id}`}>{list.name}</h2>
      {list.ips.length === 0 ? (
        <p class="empty">Empty: add an address or a prefix below.</p>
      ) : (
        <ul class="entries" aria-label={`Entries of ${list.name}`}>
          {list.ips.map((ip) => (
            <li key={ip}>
              <code>{ip}</code>{' '}
              <button type="button" class="link danger" aria-label={`Remove ${ip} from ${list.name}`} onClick={() => void change(() => api('DELETE', `${base}/${seg(ip)}`))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} class="inline">
        <TextField label="Address or prefix" name="ip" value={entry} onValue={setEntry} placeholder="203.0.113.7 or 2001:db8::/48" problem={action.problem} />
        <button type="submit" disabled={action.busy || entry.trim() === ''}>
          Add to {list.name}
        </button>
      </form>
      <NodesChoice nodes={nodes} allnodes={list.allnodes} chosen={list.nodes} onValue={(allnodes, chosen) => void change(() => api('PATCH', base, { allnodes, nodes: chosen }))} />
      <ProblemNote problem={action.problem} shown={['ip']} />
      <button
        type="button"
        class="danger"
        onClick={() => {
          if (confirm(`Remove the list ${list.name}?`)) void change(() => api('DELETE', base));
        }}
      >
        Remove list
      </button>
    </article>
  );
}

function NewList({ onAdded }: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const [ips, setIps] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const made = await action.run(() => api<IpList>('POST', '/security/iplist', { name: name.trim(), ips: splitList(ips) }));
    if (made) {
      setName('');
      setIps('');
      onAdded();
    }
  };
  return (
    <section aria-labelledby="new-list">
      <h2 id="new-list">New IP list</h2>
      <form onSubmit={submit} class="grid">
        <TextField label="Name" name="name" value={name} onValue={setName} required problem={action.problem} />
        <TextField label="Addresses and prefixes (comma- or space-separated)" name="ips" value={ips} onValue={setIps} problem={action.problem} />
        <ProblemNote problem={action.problem} shown={['name', 'ips']} />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Create list
          </button>
        </div>
      </form>
    </section>
  );
}

export function IpListsPage() {
  const loaded = useLoad(() => Promise.all([page<IpList>('/security/iplist?limit=1000'), get<EdgeNode[]>('/nodes?limit=1000')]), []);
  return (
    <>
      <PageTitle>IP lists</PageTitle>
      <p>The edge refuses requests from the addresses and networks in your lists.</p>
      <ProblemNote problem={loaded.problem} />
      {!loaded.data && !loaded.problem && <Loading what="IP lists" />}
      {loaded.data && loaded.data[0].items.length === 0 && <p class="empty">You have no IP lists. Create one below to block addresses at the edge.</p>}
      {loaded.data?.[0].items.map((list) => <ListCard key={list.id} list={list} nodes={loaded.data![1]} onChanged={loaded.reload} />)}
      <NewList onAdded={loaded.reload} />
    </>
  );
}
