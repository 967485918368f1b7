// Zone files, when the API offers them (POST/GET /domains/{domain}/zonefile in its OpenAPI
// document): export as a download; import as a dry run first — what would be added, changed,
// removed and skipped, line by line — and applied only when the customer confirms that diff.
import { useState } from 'preact/hooks';
import { api, download, seg, TextBody } from '../api.ts';
import type { DnsRecord } from '../types.ts';
import { ProblemNote, useAction } from '../ui.tsx';

interface ImportResult {
  dry_run: boolean;
  revision: number;
  added: Array<{ line: number; record: DnsRecord }>;
  changed: Array<{ line: number; record: DnsRecord; ttl_before: number }>;
  removed: DnsRecord[];
  unchanged: number;
  skipped: Array<{ line: number; message: string }>;
}

/** Lines listed per part of the diff: a 20,000-record file's diff is counted whole, listed in part. */
const LISTED = 200;

function More({ total }: { total: number }) {
  return total > LISTED ? <li>… and {total - LISTED} more</li> : null;
}

const show = (r: DnsRecord) => `${r.name} ${r.ttl} ${r.type_name} ${r.priority ?? ''} ${r.value}`.replace(/\s+/g, ' ');

function Diff({ result }: { result: ImportResult }) {
  return (
    <div class="diff" id="zonefile-diff">
      <p>
        {result.added.length} to add, {result.changed.length} to change, {result.removed.length} to remove, {result.unchanged} unchanged, {result.skipped.length} lines skipped.
      </p>
      {result.added.length > 0 && (
        <details open={result.added.length <= 50}>
          <summary>To add ({result.added.length})</summary>
          <ul>
            {result.added.slice(0, LISTED).map((a) => (
              <li key={`a${a.line}-${a.record.value}`}>
                line {a.line}: <code>{show(a.record)}</code>
              </li>
            ))}
            <More total={result.added.length} />
          </ul>
        </details>
      )}
      {result.changed.length > 0 && (
        <details open={result.changed.length <= 50}>
          <summary>To change ({result.changed.length})</summary>
          <ul>
            {result.changed.slice(0, LISTED).map((c) => (
              <li key={`c${c.line}-${c.record.id}`}>
                line {c.line}: <code>{show(c.record)}</code> (TTL was {c.ttl_before})
              </li>
            ))}
            <More total={result.changed.length} />
          </ul>
        </details>
      )}
      {result.removed.length > 0 && (
        <details open={result.removed.length <= 50}>
          <summary>To remove ({result.removed.length})</summary>
          <ul>
            {result.removed.slice(0, LISTED).map((r) => (
              <li key={`r${r.id}`}>
                <code>{show(r)}</code>
              </li>
            ))}
            <More total={result.removed.length} />
          </ul>
        </details>
      )}
      {result.skipped.length > 0 && (
        <details>
          <summary>Skipped ({result.skipped.length})</summary>
          <ul>
            {result.skipped.slice(0, LISTED).map((s) => (
              <li key={`s${s.line}`}>
                line {s.line}: {s.message}
              </li>
            ))}
            <More total={result.skipped.length} />
          </ul>
        </details>
      )}
    </div>
  );
}

export function ZoneFile({ domain, onImported }: { domain: string; onImported: () => void }) {
  const [text, setText] = useState('');
  const [preview, setPreview] = useState<ImportResult | null>(null);
  const [applied, setApplied] = useState<ImportResult | null>(null);
  const action = useAction();
  const path = `/domains/${seg(domain)}/zonefile`;
  const exportFile = async () => {
    const blob = await action.run(() => download(path));
    if (!blob) return;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = `${domain}.zone`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };
  const dryRun = async (event: Event) => {
    event.preventDefault();
    setApplied(null);
    setPreview((await action.run(() => api<ImportResult>('POST', `${path}?dry_run=true`, new TextBody(text, 'text/dns')))) ?? null);
  };
  const apply = async () => {
    const result = await action.run(() => api<ImportResult>('POST', path, new TextBody(text, 'text/dns')));
    if (result) {
      setPreview(null);
      setApplied(result);
      onImported();
    }
  };
  return (
    <section aria-labelledby="zonefile-title">
      <h3 id="zonefile-title">Zone file</h3>
      <button type="button" class="secondary" onClick={exportFile} disabled={action.busy}>
        Export zone file
      </button>
      <form onSubmit={dryRun}>
        <div class="field">
          <label for="zonefile-text">Import a zone file (BIND format): it replaces this domain's records</label>
          <input
            type="file"
            accept=".zone,.txt,text/dns,text/plain"
            aria-label="Read a zone file from disk"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              if (file) void file.text().then((t) => (setText(t), setPreview(null)));
            }}
          />
          <textarea id="zonefile-text" rows={8} value={text} spellcheck={false} onInput={(e) => (setText(e.currentTarget.value), setPreview(null))} />
        </div>
        <div class="actions">
          <button type="submit" class="secondary" disabled={action.busy || text.trim() === ''}>
            Preview the changes
          </button>
          {preview && (
            <button type="button" onClick={apply} disabled={action.busy}>
              Apply these changes
            </button>
          )}
          {action.busy && <progress aria-label="Working on the zone file" />}
        </div>
      </form>
      <ProblemNote problem={action.problem} />
      {preview && <Diff result={preview} />}
      {applied && (
        <p role="status" class="ok">
          Imported: {applied.added.length} added, {applied.changed.length} changed, {applied.removed.length} removed (revision {applied.revision}).
        </p>
      )}
    </section>
  );
}
