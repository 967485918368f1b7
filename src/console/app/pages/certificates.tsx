// Certificates: the tasks that order them, with their state and problems in plain words; ask again
// (renew) and download the certificate as a ZIP. Tasks in progress are followed every 2 s.
import { useEffect } from 'preact/hooks';
import { api, download, page, seg } from '../api.ts';
import { href } from '../router.ts';
import type { Task } from '../types.ts';
import { Loading, PageTitle, ProblemNote, useAction, useLoad, when } from '../ui.tsx';

const STATE_WORDS: Record<Task['state'], string> = {
  queued: 'Waiting to start',
  running: 'Being issued',
  done: 'Issued',
  failed: 'Failed',
};

/** The CA's problem types in words a customer acts on. */
function plainProblem(type: string, detail: string): string {
  const kind = type.split(':').pop() ?? type;
  const words: Record<string, string> = {
    connection: 'the certificate authority could not reach the name over HTTP: check that it points at our edge',
    dns: 'the certificate authority could not look the name up: check its DNS records and the delegation',
    unauthorized: 'the certificate authority did not find the proof it expected',
    rateLimited: 'the certificate authority limits how many certificates it issues: it will be asked again later',
    caa: 'a CAA record forbids this certificate authority',
    rejectedIdentifier: 'the certificate authority will not issue for this name',
  };
  return words[kind] ? `${words[kind]} (${detail})` : detail;
}

function TaskRow({ task, onChanged }: { task: Task; onChanged: () => void }) {
  const action = useAction();
  const renew = async () => {
    if (await action.run(() => api('POST', `/domains/${seg(task.domain)}/certificate`))) onChanged();
  };
  const save = async () => {
    const blob = await action.run(() => download(`/domains/${seg(task.domain)}/certexport`));
    if (!blob) return;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = `${task.domain}.zip`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };
  const inProgress = task.state === 'queued' || task.state === 'running';
  return (
    <article class="card task" aria-labelledby={`task-${task.id}`} data-state={task.state}>
      <h2 id={`task-${task.id}`}>
        <a href={href('domains', task.domain)}>{task.domain}</a>
      </h2>
      <p class={`state state-${task.state}`}>
        <strong>{STATE_WORDS[task.state]}</strong>
        {inProgress && <progress aria-label={`Certificate for ${task.domain} in progress`} />}
        {task.state === 'queued' && task.next_attempt && ` — next attempt ${when(task.next_attempt)}`}
      </p>
      <p>
        Names: {task.names.join(', ')} · attempts: {task.attempts} · updated {when(task.updated)}
      </p>
      {task.error && <p class="error">{task.error}</p>}
      {task.problems.length > 0 && (
        <ul>
          {task.problems.map((p) => (
            <li key={p.name}>
              {p.name}: {plainProblem(p.type, p.detail)}
            </li>
          ))}
        </ul>
      )}
      {task.certificate && (
        <p>
          Valid {when(task.certificate.not_before)} – {when(task.certificate.not_after)}
        </p>
      )}
      <div class="actions">
        <button type="button" class="secondary" onClick={renew} disabled={action.busy || inProgress}>
          {task.state === 'done' ? 'Renew now' : 'Ask again'}
        </button>
        {task.certificate && (
          <button type="button" onClick={save} disabled={action.busy}>
            Download ZIP
          </button>
        )}
      </div>
      <ProblemNote problem={action.problem} />
    </article>
  );
}

export function CertificatesPage() {
  const tasks = useLoad(() => page<Task>('/tasks?state=all&limit=1000'), []);
  const busy = tasks.data?.items.some((t) => t.state === 'queued' || t.state === 'running');
  useEffect(() => {
    if (!busy) return;
    const timer = setTimeout(tasks.reload, 2000);
    return () => clearTimeout(timer);
  }, [busy, tasks.data, tasks.reload]);
  return (
    <>
      <PageTitle>Certificates</PageTitle>
      <ProblemNote problem={tasks.problem} />
      {!tasks.data && !tasks.problem && <Loading what="certificate tasks" />}
      {tasks.data && tasks.data.items.length === 0 && <p class="empty">No certificates yet. Turn on HTTPS in a domain's settings and its certificate is ordered here.</p>}
      {tasks.data?.items.map((t) => <TaskRow key={t.id} task={t} onChanged={tasks.reload} />)}
    </>
  );
}
