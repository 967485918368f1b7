// What to set at the registrar, whether our name servers answer for the domain (activation),
// whether the delegation is seen, and the DS the registrar needs for DNSSEC.
import { api, seg } from '../api.ts';
import { DnssecSection } from './dnssec.tsx';
import type { Domain } from '../types.ts';
import { ProblemNote, useAction, when } from '../ui.tsx';

export function NameServersTab({ domain, onChanged }: { domain: Domain; onChanged: () => void }) {
  const action = useAction();
  const toggle = async () => {
    const done = await action.run(() => api('POST', `/domains/${seg(domain.domain)}/${domain.ns_active ? 'deactivatens' : 'activatens'}`));
    if (done) onChanged();
  };
  const check = async () => {
    const done = await action.run(() => api('POST', `/domains/${seg(domain.domain)}/verify`));
    if (done) onChanged();
  };
  const v = domain.verification;
  // A delegation cannot prove this claim (another account's claim has the same name servers): only the token can.
  const tokenOnly = v.state !== 'verified' && !v.accepts.includes('delegation');
  return (
    <section aria-labelledby="ns-title">
      <h2 id="ns-title">Name servers</h2>
      {v.state !== 'verified' && v.instructions && (
        <p id="ns-instructions" class={tokenOnly ? 'problem' : 'hint'}>
          {v.instructions}
        </p>
      )}
      <h3>At your registrar</h3>
      <p>{tokenOnly ? `Once ${domain.domain} is proven by its TXT record, delegate it to these name servers:` : `Delegate ${domain.domain} to these name servers:`}</p>
      <ul class="nameservers">
        {domain.nameservers.map((ns) => (
          <li key={ns}>
            <code>{ns}</code>
          </li>
        ))}
      </ul>
      <h3>Our name servers</h3>
      <p id="ns-state">
        {domain.ns_active ? 'Active: our name servers answer for this domain.' : 'Not active: our name servers do not answer for this domain yet.'}
      </p>
      <button type="button" onClick={toggle} disabled={action.busy} class={domain.ns_active ? 'secondary' : ''}>
        {domain.ns_active ? 'Deactivate name servers' : 'Activate name servers'}
      </button>
      <h3>Delegation</h3>
      <dl>
        <dt>Ownership</dt>
        <dd>{v.state === 'verified' ? `Proven (${v.method ?? 'unknown method'})` : tokenOnly ? 'Not proven yet: only the TXT record below proves it' : 'Not proven yet: delegate the domain as above, or add the TXT record below'}</dd>
        {v.token && v.state !== 'verified' && (
          <>
            <dt>Proof by TXT record</dt>
            <dd>
              <code>_palisade-verify.{domain.domain}</code> holding <code>{v.token}</code>
            </dd>
          </>
        )}
        <dt>Seen at the registry</dt>
        <dd>
          {v.seen
            ? `${v.seen.delegation ? 'Delegated to the name servers above' : `Not delegated to the name servers above (seen: ${v.seen.nameservers.join(', ') || 'none'})`} — looked ${when(v.seen.at)}${v.seen.note ? `; ${v.seen.note}` : ''}`
            : 'Not looked at yet'}
        </dd>
        {v.next_check && (
          <>
            <dt>Next look</dt>
            <dd>{when(v.next_check)}</dd>
          </>
        )}
      </dl>
      {v.state !== 'verified' && (
        <button type="button" class="secondary" onClick={check} disabled={action.busy}>
          Look now
        </button>
      )}
      <ProblemNote problem={action.problem} />
      <DnssecSection domain={domain} />
    </section>
  );
}
