// The domain's DNSSEC as the registrar needs it: the state, and per key the DS to paste there
// (with a copy button) and the DNSKEY, with what to do next; in a key rollover, each key's part
// and the DS to add and to remove. Read from GET /domains/{d}/dnssec.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { get, seg } from '../api.ts';
import type { DnssecStatus, Domain } from '../types.ts';
import { Loading, ProblemNote, useLoad } from '../ui.tsx';

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<boolean | undefined>(undefined);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, a refused permission): the record stays selectable.
      setCopied(false);
    }
  };
  return (
    <>
      <button type="button" class="secondary" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span role="status" class="hint">
        {copied === true ? ' Copied.' : copied === false ? ' Copying is not allowed here: select the record instead.' : ''}
      </span>
    </>
  );
}

/** A key's part in a rollover, after its tag (the active key outside one says nothing more). */
const ROLES: Record<string, string> = { published: ', new: published, not yet signing', retiring: ', old: retiring' };

export function DnssecSection({ domain }: { domain: Domain }) {
  // Reloaded with the domain: the settings (dnssec on or off) change what this shows.
  const loaded = useLoad(() => get<DnssecStatus>(`/domains/${seg(domain.domain)}/dnssec`), [domain]);
  const status = loaded.data;
  return (
    <section aria-labelledby="dnssec-title">
      <h3 id="dnssec-title">DNSSEC</h3>
      <ProblemNote problem={loaded.problem} />
      {!status && !loaded.problem && <Loading what="DNSSEC" />}
      {status && (
        <>
          <p id="dnssec-state">
            State: <strong>{status.state.replace(/_/g, ' ')}</strong>
          </p>
          <p id="dnssec-next" class="hint">
            {status.next_step}
          </p>
          {status.rollover && (
            <p id="dnssec-rollover">
              Key rollover: {status.rollover.ds_to_add.length > 0 && <>add {status.rollover.ds_to_add.map((ds) => <code key={ds}>{ds}</code>)} at your registrar. </>}
              {status.rollover.ds_to_remove.length > 0 && <>Remove {status.rollover.ds_to_remove.map((ds) => <code key={ds}>{ds}</code>)} there, keeping the new one.</>}
            </p>
          )}
          {status.keys.length > 0 && (
            <dl id="dnssec-keys">
              {status.keys.map((key) => (
                <Fragment key={key.key_tag}>
                  <dt>
                    DS record (key {key.key_tag}
                    {ROLES[key.role] ?? ''}), for your registrar
                  </dt>
                  <dd>
                    <code class="ds">{key.ds}</code> <CopyButton text={key.ds} label={`Copy the DS record of key ${key.key_tag}`} />
                  </dd>
                  <dt>DNSKEY (some registrars ask for it instead)</dt>
                  <dd>
                    <code class="dnskey">{key.dnskey}</code> <CopyButton text={key.dnskey} label={`Copy the DNSKEY of key ${key.key_tag}`} />
                  </dd>
                </Fragment>
              ))}
            </dl>
          )}
        </>
      )}
    </section>
  );
}
