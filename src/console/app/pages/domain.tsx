// One domain: its tabs (settings, DNS records, name servers, uptime) and the settings form, which
// holds every field of the domain and sends only what changed.
import { useState } from 'preact/hooks';
import { api, get, seg } from '../api.ts';
import { href } from '../router.ts';
import type { Domain, EdgeNode } from '../types.ts';
import { CheckField, Loading, PageTitle, ProblemNote, SelectField, splitList, TextField, useAction, useLoad } from '../ui.tsx';
import { RecordsTab } from './records.tsx';
import { NameServersTab } from './nameservers.tsx';
import { UptimeTab } from './uptime.tsx';

type Tab = 'settings' | 'records' | 'nameservers' | 'uptime';
const TABS: Array<[Tab, string]> = [
  ['settings', 'Settings'],
  ['records', 'DNS records'],
  ['nameservers', 'Name servers'],
  ['uptime', 'Uptime'],
];

/** The form's text for each setting (lists as comma-separated text, numbers as typed). */
interface Draft {
  enabled: boolean;
  mask: string;
  ssl: boolean;
  tags: string;
  backend: string;
  failover: string;
  fhttps: boolean;
  cachelevel: number;
  sjschallenge: boolean;
  baseprotection: boolean;
  bwlimit: string;
  geomode: 0 | 1 | 2;
  geolist: string;
  bind_node: number[];
  cachelargefiles: boolean;
  waf_level: number;
  waf_mode: 'block' | 'log';
  waf_exclusions: string;
  waf_body_limit: string;
  waf_body_overflow: 'auto' | 'refuse' | 'prefix';
  dnssec: boolean;
  dnssec_algorithm: 13 | 15;
  waf_graphql: 'off' | 'block';
}

/** The settings the form holds: only these are ever sent (the domain's read-only fields — its revision, when it was updated — change under a mounted form). */
const SETTINGS = ['enabled', 'mask', 'ssl', 'tags', 'backend', 'failover', 'fhttps', 'cachelevel', 'sjschallenge', 'baseprotection', 'bwlimit', 'geomode', 'geolist', 'bind_node', 'cachelargefiles', 'waf_level', 'waf_mode', 'waf_exclusions', 'waf_body_limit', 'waf_body_overflow', 'dnssec', 'dnssec_algorithm', 'waf_graphql'] as const;
// Every field of the draft is in SETTINGS: a new setting added to Draft but not here fails the typecheck.
const everySetting: Record<Exclude<keyof Draft, (typeof SETTINGS)[number]>, never> = {};
void everySetting;

const draftOf = (d: Domain): Draft => ({
  ...(Object.fromEntries(SETTINGS.map((key) => [key, d[key]])) as Pick<Domain, (typeof SETTINGS)[number]>),
  tags: d.tags.join(', '),
  failover: d.failover ?? '',
  bwlimit: String(d.bwlimit),
  geolist: d.geolist.join(', '),
  waf_exclusions: JSON.stringify(d.waf_exclusions),
  waf_body_limit: String(d.waf_body_limit),
});

/** A number field's text as the API should judge it: a number when it reads as one, else the text (the API names the field). */
const numberOr = (text: string): number | string => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);

/** The settings that differ from the domain as read; the API checks every value. */
function changes(domain: Domain, draft: Draft): Record<string, unknown> {
  let exclusions: unknown = draft.waf_exclusions;
  try {
    exclusions = JSON.parse(draft.waf_exclusions);
  } catch {
    // Sent as typed: the API says at the field that it is not a list.
  }
  const wanted: Record<string, unknown> = {
    ...draft,
    tags: splitList(draft.tags),
    failover: draft.failover.trim() === '' ? null : draft.failover.trim(),
    backend: draft.backend.trim(),
    bwlimit: numberOr(draft.bwlimit),
    geolist: splitList(draft.geolist).map((c) => c.toUpperCase()),
    waf_exclusions: exclusions,
    waf_body_limit: numberOr(draft.waf_body_limit),
  };
  const current = domain as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.entries(wanted).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(current[key])));
}

function SettingsForm({ domain, nodes, onSaved }: { domain: Domain; nodes: EdgeNode[]; onSaved: () => void }) {
  const [draft, setDraft] = useState(() => draftOf(domain));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const set = <K extends keyof Draft>(key: K) => (value: Draft[K]) => (setSaved(false), setDraft((d) => ({ ...d, [key]: value })));
  const p = action.problem;
  const submit = async (event: Event) => {
    event.preventDefault();
    const patch = changes(domain, draft);
    if (Object.keys(patch).length === 0) return setSaved(true);
    const updated = await action.run(() => api<Domain>('PATCH', `/domains/${seg(domain.domain)}`, patch));
    if (updated) {
      setSaved(true);
      onSaved();
    }
  };
  const remove = async () => {
    if (!confirm(`Remove ${domain.domain} and all its records? This cannot be undone.`)) return;
    const done = await action.run(() => api('DELETE', `/domains/${seg(domain.domain)}`).then(() => true));
    if (done) location.hash = href('domains');
  };
  return (
    <form onSubmit={submit}>
      <TrafficFields draft={draft} set={set} p={p} nodes={nodes} />
      <fieldset>
        <legend>DNSSEC</legend>
        <CheckField label="Sign the zone's answers (DNSSEC)" name="dnssec" checked={draft.dnssec} onValue={set('dnssec')} problem={p} />
        <SelectField label="Algorithm" name="dnssec_algorithm" value={draft.dnssec_algorithm} onValue={set('dnssec_algorithm')} problem={p} options={[[13, 'ECDSA P-256 (13)'], [15, 'Ed25519 (15)']]} />
        <p class="hint">Once on, publish the DS record shown on the Name servers tab at your registrar. Before turning it off, remove the DS there and wait out its TTL.</p>
      </fieldset>
      <fieldset>
        <legend>HTTPS and caching</legend>
        <CheckField label="HTTPS with a certificate issued by the service" name="ssl" checked={draft.ssl} onValue={set('ssl')} problem={p} />
        <CheckField label="Redirect HTTP to HTTPS" name="fhttps" checked={draft.fhttps} onValue={set('fhttps')} problem={p} />
        <SelectField label="Caching" name="cachelevel" value={draft.cachelevel} onValue={set('cachelevel')} problem={p} options={[[0, 'Off'], [1, 'Basic'], [2, 'Standard'], [3, 'Aggressive']]} />
        <CheckField label="Cache large files" name="cachelargefiles" checked={draft.cachelargefiles} onValue={set('cachelargefiles')} problem={p} />
        <TextField label="Bandwidth limit (KB/s, 0 for none)" name="bwlimit" value={draft.bwlimit} onValue={set('bwlimit')} problem={p} type="text" />
      </fieldset>
      <ProtectionFields draft={draft} set={set} p={p} />
      <ProblemNote problem={p} shown={Object.keys(draft)} />
      {saved && !p && (
        <p role="status" class="ok">
          Saved.
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          Save settings
        </button>
        <button type="button" class="danger" onClick={remove} disabled={action.busy}>
          Remove domain
        </button>
      </div>
    </form>
  );
}

/** What each group of the form's fields is given: the draft, a setter per field, the problem to show at a field. */
interface FieldsProps {
  draft: Draft;
  set: <K extends keyof Draft>(key: K) => (value: Draft[K]) => void;
  p: ReturnType<typeof useAction>['problem'];
}

/** Where visitors are sent, which names are protected, and on which edge nodes. */
function TrafficFields({ draft, set, p, nodes }: FieldsProps & { nodes: EdgeNode[] }) {
  return (
    <fieldset>
      <legend>Traffic</legend>
      <TextField label="Backend" name="backend" value={draft.backend} onValue={set('backend')} problem={p} hint="IP address and optional port the edge sends visitors to" />
      <TextField label="Failover backend" name="failover" value={draft.failover} onValue={set('failover')} problem={p} hint="Used while the backend is down; empty for none" />
      <CheckField label="Protection on (protected names resolve to the edge)" name="enabled" checked={draft.enabled} onValue={set('enabled')} problem={p} />
      <TextField label="Protected names" name="mask" value={draft.mask} onValue={set('mask')} problem={p} hint="Relative names, comma-separated (www, shop), or * for every name" />
      <TextField label="Tags" name="tags" value={draft.tags} onValue={set('tags')} problem={p} hint="Comma-separated" />
      <fieldset class="nodes">
        <legend>Edge nodes (none ticked: every node)</legend>
        {nodes.length === 0 && <p class="hint">No edge nodes are registered.</p>}
        {nodes.map((n) => (
          <CheckField
            key={n.id}
            label={`${n.name} (${n.location})`}
            name="bind_node"
            checked={draft.bind_node.includes(n.id)}
            onValue={(on) => set('bind_node')(on ? [...draft.bind_node, n.id] : draft.bind_node.filter((id) => id !== n.id))}
          />
        ))}
        {p?.fieldMessage('bind_node') && <span class="error">{p.fieldMessage('bind_node')}</span>}
      </fieldset>
    </fieldset>
  );
}

/** The WAF's settings and the country filter. */
function ProtectionFields({ draft, set, p }: FieldsProps) {
  return (
    <fieldset>
      <legend>Protection</legend>
      <CheckField label="JavaScript challenge for new visitors" name="sjschallenge" checked={draft.sjschallenge} onValue={set('sjschallenge')} problem={p} />
      <CheckField label="Baseline protection rules (WAF)" name="baseprotection" checked={draft.baseprotection} onValue={set('baseprotection')} problem={p} />
      <SelectField label="WAF sensitivity" name="waf_level" value={draft.waf_level} onValue={set('waf_level')} problem={p} options={[[1, '1: fewest false positives'], [2, '2'], [3, '3'], [4, '4: strictest']]} />
      <SelectField label="WAF mode" name="waf_mode" value={draft.waf_mode} onValue={set('waf_mode')} problem={p} options={[['block', 'Block'], ['log', 'Log only']]} />
      <TextField label="WAF exclusions (JSON list)" name="waf_exclusions" value={draft.waf_exclusions} onValue={set('waf_exclusions')} problem={p} hint='e.g. [{"rule": 942100, "path": "/search", "param": "q"}]' />
      <TextField label="Body inspected (KiB)" name="waf_body_limit" value={draft.waf_body_limit} onValue={set('waf_body_limit')} problem={p} />
      <SelectField label="Past that" name="waf_body_overflow" value={draft.waf_body_overflow} onValue={set('waf_body_overflow')} problem={p} options={[['auto', 'Automatic'], ['refuse', 'Refuse (413)'], ['prefix', 'Inspect the start only']]} />
      <SelectField label="GraphQL introspection and batching" name="waf_graphql" value={draft.waf_graphql} onValue={set('waf_graphql')} problem={p} options={[['off', 'Allowed'], ['block', 'Refused']]} />
      <SelectField label="Country filter" name="geomode" value={draft.geomode} onValue={set('geomode')} problem={p} options={[[0, 'None'], [1, 'Allow only the countries listed'], [2, 'Block the countries listed']]} />
      <TextField label="Countries (ISO codes)" name="geolist" value={draft.geolist} onValue={set('geolist')} problem={p} hint="e.g. DE, FR" />
    </fieldset>
  );
}

export function DomainPage({ domain, tab }: { domain: string; tab: Tab }) {
  const loaded = useLoad(() => Promise.all([get<Domain>(`/domains/${seg(domain)}`), get<EdgeNode[]>('/nodes?limit=1000')]), [domain]);
  const data = loaded.data?.[0];
  return (
    <>
      <PageTitle>{domain}</PageTitle>
      <p>
        <a href="#/domains">← All domains</a>
      </p>
      <nav aria-label="Domain sections" class="tabs">
        <ul>
          {TABS.map(([id, text]) => (
            <li key={id}>
              <a href={href('domains', domain, id)} aria-current={tab === id ? 'page' : undefined}>
                {text}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {loaded.problem && (loaded.problem.status === 404 ? <p class="empty">You have no domain {domain}. <a href="#/domains">See your domains</a>.</p> : <ProblemNote problem={loaded.problem} />)}
      {!data && !loaded.problem && <Loading what="the domain" />}
      {data && loaded.data && (
        <>
          {tab === 'settings' && (
            <section aria-labelledby="settings-title">
              <h2 id="settings-title">Settings</h2>
              <SettingsForm key={data.domain} domain={data} nodes={loaded.data[1]} onSaved={loaded.reload} />
            </section>
          )}
          {tab === 'records' && <RecordsTab domain={data} />}
          {tab === 'nameservers' && <NameServersTab domain={data} onChanged={loaded.reload} />}
          {tab === 'uptime' && <UptimeTab domain={domain} />}
        </>
      )}
    </>
  );
}
