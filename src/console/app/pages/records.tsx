// A domain's DNS records: the table (filtered by name and type, a page at a time), the form that
// adds one or changes the one being edited, and removal.
import { useState } from 'preact/hooks';
import { api, offers, page, seg, type Page } from '../api.ts';
import { RECORD_TYPES, type DnsRecord, type Domain } from '../types.ts';
import { Loading, ProblemNote, SelectField, TextField, useAction, useLoad } from '../ui.tsx';
import { GeoPicker, useTargetWords } from './geo-picker.tsx';
import { ZoneFile } from './zonefile.tsx';

interface RecordDraft {
  name: string;
  type: string;
  value: string;
  ttl: string;
  priority: string;
  target: number[];
}

const EMPTY: RecordDraft = { name: '', type: 'A', value: '', ttl: '300', priority: '', target: [] };

const VALUE_HINTS: Record<string, string> = {
  A: 'An IPv4 address',
  AAAA: 'An IPv6 address',
  CNAME: 'A host name',
  MX: 'The mail exchange host name (its preference goes in Priority)',
  NS: 'A host name',
  TXT: 'Text, or quoted strings in zone-file form',
  SOA: 'rname refresh retry expire minimum',
  SRV: 'weight port target (its priority goes in Priority)',
  CAA: 'flags tag "value", e.g. 0 issue "letsencrypt.org"',
  PTR: 'A host name',
  TLSA: 'usage selector matching-type hex-data, e.g. 3 1 1 <64 hex digits>',
  SSHFP: 'algorithm fingerprint-type hex-fingerprint, e.g. 4 2 <64 hex digits>',
  NAPTR: 'order preference "flags" "service" "regexp" replacement',
  DS: 'key-tag algorithm digest-type hex-digest (only beside NS records of the same name)',
};

const numberOr = (text: string): number | string => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);

function bodyOf(draft: RecordDraft): Record<string, unknown> {
  return {
    name: draft.name.trim() || '@',
    type: draft.type,
    value: draft.value,
    ttl: numberOr(draft.ttl),
    priority: draft.priority.trim() === '' ? null : numberOr(draft.priority),
    target: draft.target,
  };
}

function RecordForm({ domain, editing, onDone }: { domain: string; editing: DnsRecord | null; onDone: () => void }) {
  const [draft, setDraft] = useState<RecordDraft>(() =>
    editing ? { name: editing.name, type: editing.type_name, value: editing.value, ttl: String(editing.ttl), priority: editing.priority === null ? '' : String(editing.priority), target: editing.target } : EMPTY,
  );
  const action = useAction();
  const set = <K extends keyof RecordDraft>(key: K) => (value: RecordDraft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const p = action.problem;
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = bodyOf(draft);
    const done = editing
      ? await action.run(() => api<DnsRecord>('PATCH', `/domains/${seg(domain)}/dnsrecords/${editing.id}`, body))
      : await action.run(() => api<DnsRecord>('POST', `/domains/${seg(domain)}/dnsrecords`, body));
    if (done) {
      if (!editing) setDraft({ ...EMPTY, type: draft.type });
      onDone();
    }
  };
  const needsPriority = draft.type === 'MX' || draft.type === 'SRV';
  return (
    <form onSubmit={submit} class="grid record-form" aria-label={editing ? `Change record ${editing.id}` : 'Add a record'}>
      <TextField label="Name" name="name" value={draft.name} onValue={set('name')} problem={p} hint="@ for the domain itself, or a name under it (www)" />
      <SelectField label="Type" name="type" value={draft.type} onValue={set('type')} problem={p} options={RECORD_TYPES.map((t) => [t, t])} />
      <TextField label="Value" name="value" value={draft.value} onValue={set('value')} problem={p} hint={VALUE_HINTS[draft.type]} required />
      <TextField label="TTL (seconds)" name="ttl" value={draft.ttl} onValue={set('ttl')} problem={p} />
      {(needsPriority || draft.priority !== '') && <TextField label="Priority" name="priority" value={draft.priority} onValue={set('priority')} problem={p} />}
      <GeoPicker value={draft.target} onValue={set('target')} error={p?.fieldMessage('target')} />
      <ProblemNote problem={p} shown={['name', 'type', 'value', 'ttl', 'priority', 'target']} />
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          {editing ? 'Save record' : 'Add record'}
        </button>
        {editing && (
          <button type="button" class="secondary" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function RecordsTab({ domain }: { domain: Domain }) {
  const [filter, setFilter] = useState({ name: '', type: '' });
  const [trail, setTrail] = useState<string[]>([]);
  const [editing, setEditing] = useState<DnsRecord | null>(null);
  const removal = useAction();
  const base = `/domains/${seg(domain.domain)}/dnsrecords`;
  const query = new URLSearchParams({ limit: '100' });
  if (filter.name) query.set('name', filter.name);
  if (filter.type) query.set('type', filter.type);
  const path = trail[trail.length - 1] ?? `${base}?${query}`;
  const list = useLoad<Page<DnsRecord>>(() => page<DnsRecord>(path), [path]);
  // Geo targets by name ("Germany, France"), not a count.
  const targetWords = useTargetWords(list.data?.items.flatMap((r) => r.target) ?? []);
  // Zone files only where this API offers them (its OpenAPI document says so).
  const zoneFiles = useLoad(() => Promise.all([offers('POST', '/domains/{domain}/zonefile'), offers('GET', '/domains/{domain}/zonefile')]).then(([a, b]) => a && b), []);
  // The form below takes the record; the keyboard goes there with it.
  const edit = (record: DnsRecord) => {
    setEditing(record);
    requestAnimationFrame(() => document.querySelector<HTMLInputElement>('.record-form input')?.focus());
  };
  const remove = async (record: DnsRecord) => {
    if (!confirm(`Remove the ${record.type_name} record ${record.name} → ${record.value}?`)) return;
    await removal.run(() => api('DELETE', `${base}/${record.id}`));
    list.reload();
  };
  return (
    <section aria-labelledby="records-title">
      <h2 id="records-title">DNS records</h2>
      {zoneFiles.data === false && (
        <p class="hint" id="no-zonefiles">
          Zone file import and export are not offered by this service yet.
        </p>
      )}
      <RecordFilter
        onFilter={(chosen) => {
          setTrail([]);
          setFilter(chosen);
        }}
      />
      <ProblemNote problem={list.problem ?? removal.problem} />
      {!list.data && !list.problem && <Loading what="records" />}
      {list.data && list.data.items.length === 0 && <p class="empty">{filter.name || filter.type ? 'No record matches.' : 'No records yet: add the first one below (an A record for @ points the domain itself at an address).'}</p>}
      {list.data && list.data.items.length > 0 && <RecordTable records={list.data.items} zone={domain.domain} targetWords={targetWords} onEdit={edit} onRemove={(r) => void remove(r)} />}
      <nav aria-label="Pages of records" class="pager">
        <button type="button" class="secondary" disabled={trail.length === 0} onClick={() => setTrail(trail.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!list.data?.next} onClick={() => list.data?.next && setTrail([...trail, list.data.next])}>
          Next page
        </button>
      </nav>
      {zoneFiles.data === true && <ZoneFile domain={domain.domain} onImported={list.reload} />}
      <h3>{editing ? `Change the ${editing.type_name} record ${editing.name}` : 'Add a record'}</h3>
      <RecordForm
        key={editing?.id ?? 'new'}
        domain={domain.domain}
        editing={editing}
        onDone={() => {
          setEditing(null);
          list.reload();
        }}
      />
    </section>
  );
}

/** The filter by name and type: what is typed applies when the form is sent. */
function RecordFilter({ onFilter }: { onFilter: (filter: { name: string; type: string }) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('');
  return (
    <form
      role="search"
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        onFilter({ name: name.trim(), type });
      }}
    >
      <TextField label="Name" name="filter-name" value={name} onValue={setName} />
      <SelectField label="Type" name="filter-type" value={type} onValue={setType} options={[['', 'Any'], ...RECORD_TYPES.map((t): [string, string] => [t, t])]} />
      <button type="submit" class="secondary">
        Filter
      </button>
    </form>
  );
}

/** A page of records, each with its edit and remove buttons. */
function RecordTable({ records, zone, targetWords, onEdit, onRemove }: { records: DnsRecord[]; zone: string; targetWords: (id: number) => string; onEdit: (record: DnsRecord) => void; onRemove: (record: DnsRecord) => void }) {
  return (
    <div class="table-wrap">
      <table id="record-list">
        <caption class="visually-hidden">DNS records of {zone}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Value</th>
            <th scope="col">TTL</th>
            <th scope="col">Priority</th>
            <th scope="col">Geo target</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <tr key={r.id}>
              <td>{r.name}</td>
              <td>{r.type_name}</td>
              <td class="value">{r.value}</td>
              <td>{r.ttl}</td>
              <td>{r.priority ?? ''}</td>
              <td>{r.target.length ? r.target.map(targetWords).join(', ') : 'everyone'}</td>
              <td class="row-actions">
                <button type="button" class="link" aria-label={`Edit ${r.type_name} ${r.name} ${r.value}`} onClick={() => onEdit(r)}>
                  Edit
                </button>
                <button type="button" class="link danger" aria-label={`Remove ${r.type_name} ${r.name} ${r.value}`} onClick={() => onRemove(r)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
