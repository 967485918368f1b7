// Certificates from the customer's side:
//   GET  /tasks/                         the caller's certificate tasks (open ones: active, or failed for a reason to act on;
//                                        ?state=active, ?state=all for every domain's latest)
//   GET  /tasks/{id}                     one task, with the CA's reasons per name
//   POST /domains/{domain}/certificate   ask for issuance now (after mending what made a task fail)
//   GET  /domains/{domain}/certexport    the certificate and its key as a ZIP
// Tasks themselves come from ssl being turned on, names changing and renewal (../../certs).
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
import { Type } from 'typebox';
import yazl from 'yazl';
import { issuanceReason } from '../../certs/cert-names.ts';
import { withOpenKey } from '../../certs/secret-box.ts';
import { ApiError, notFound } from '../../errors.ts';
import { isProven, type DomainState } from '../../model/domain.ts';
import { CANCELLED, renderTask, Task } from '../../model/task.ts';
import { linkNext, pageRequest } from '../paging.ts';
import { problem, sendProblem } from '../problem.ts';
import { DomainParams, errorResponses, PageQuery, pagedList, Problem } from '../schemas.ts';
import { holdsName, ownZoneHead } from '../zone-access.ts';

/**
 * After a domain was created or changed: a task when ssl is on and its certificate is missing or
 * no longer covers its names; a waiting task ends when ssl went off. The domain's change is made
 * either way (a failure here is logged, and the worker's periodic look finds the domain again).
 */
export async function followSsl(app: FastifyInstance, domain: DomainState): Promise<void> {
  try {
    if (!domain.ssl) return await app.tasks.cancel(domain, `${CANCELLED}ssl was turned off`);
    // No certificate for a claim not proven yet (issue 26): its proof calls this again.
    if (!isProven(domain)) return await app.tasks.cancel(domain, UNPROVEN);
    const reason = issuanceReason(domain, await app.store.getCertificate(domain.domain), Date.now());
    if (reason) await app.tasks.request(domain, reason);
  } catch (error) {
    app.log.warn({ err: error, domain: domain.domain }, 'certificates: the task could not be recorded; the periodic check will');
  }
}

/** What the service lacks to issue any certificate, or undefined when it can. */
export function cannotIssue(app: FastifyInstance): string | undefined {
  if (!app.config.certs.directoryUrl) return 'no ACME CA is configured (PALISADE_ACME_DIRECTORY is unset)';
  if (!app.secrets) return 'no key to seal private keys is configured (PALISADE_SECRET_KEY is unset)';
  return undefined;
}

/** Why a pending claim gets no certificate. */
export const UNPROVEN = 'no certificate is ordered (DNS-01 or HTTP-01) for a domain whose ownership is not proven; see its verification (POST /domains/{domain}/verify)';

const TaskParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const CONFLICT_WITH_TASK = {
  description: 'No certificate yet: the task, if any, says where issuance stands',
  content: { 'application/problem+json': { schema: Type.Object({ ...Problem.properties, task: Type.Union([Task, Type.Null()]) }) } },
};

const tags = ['certificates'];

export const certificateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  taskRoutes(app);
  orderCertificate(app);
  exportCertificate(app);
};

/** GET /tasks and /tasks/{id}: where your certificates' issuance stands. */
function taskRoutes(app: TypeBoxApp): void {
  app.get(
    '/tasks',
    {
      schema: {
        tags,
        summary: 'List your certificate tasks',
        description:
          'By default the open ones: queued or running, and those that failed for a reason to act on (its `error` and `problems` say what; a task ended because ssl was turned off is closed). `state=active` lists only queued and running tasks; `state=all` every domain\'s latest task, finished ones included. In domain order; a page may hold fewer than `limit` tasks (the others are skipped), so follow the Link header to the end.',
        querystring: Type.Object({ ...PageQuery, state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('active'), Type.Literal('all')])) }, { additionalProperties: false }),
        response: { 200: pagedList(Task), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const page = await app.tasks.list(request.user.id, pageRequest(request.query), request.query.state ?? 'open');
      return linkNext(request, reply, page).map(renderTask);
    },
  );

  app.get(
    '/tasks/:id',
    { schema: { tags, summary: 'Read a certificate task', params: TaskParams, response: { 200: Task, ...errorResponses(404) } } },
    async (request) => {
      const task = await app.tasks.get(request.user.id, request.params.id);
      if (!task) throw notFound(`task ${request.params.id}`);
      return renderTask(task);
    },
  );
}

/** POST /domains/{domain}/certificate: issuance queued for the domain's names (or a waiting task run now). */
function orderCertificate(app: TypeBoxApp): void {
  app.post(
    '/domains/:domain/certificate',
    {
      schema: {
        tags,
        summary: 'Ask for a certificate now',
        description:
          'Queues issuance for the domain\'s names (or runs a waiting task now). A valid certificate that covers the names and is not yet due for renewal is not replaced: the answer is then 200 with the last task. Needs `ssl` on.',
        params: DomainParams,
        response: { 200: Task, 202: Task, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const { domain } = await ownZoneHead(app, request.params.domain, request.user.id);
      if (!domain.ssl) throw new ApiError('CONFLICT', `ssl is off for ${domain.domain}; turn it on (PATCH /domains/${domain.domain} {"ssl": true}) to have a certificate issued`);
      if (!isProven(domain)) throw new ApiError('CONFLICT', `${domain.domain} is a claim not proven yet: ${UNPROVEN}`);
      // A task that can only fail again is not queued: say what the operator has to set instead.
      const missing = cannotIssue(app);
      if (missing) throw new ApiError('CONFLICT', `certificates cannot be issued by this service: ${missing}; ask its operator (the task, if any, is at GET /tasks/)`);
      const reason = issuanceReason(domain, await app.store.getCertificate(domain.domain), Date.now());
      const last = await app.tasks.forDomain(domain.ownerId, domain.domain);
      if (!reason && last) return reply.code(200).send(renderTask(last));
      const task = await app.tasks.request(domain, reason ?? 'requested');
      return reply.code(202).header('location', `/tasks/${task.id}`).send(renderTask(task));
    },
  );
}

/** GET /domains/{domain}/certexport: the certificate, its chain and private key as a ZIP. */
function exportCertificate(app: TypeBoxApp): void {
  app.get(
    '/domains/:domain/certexport',
    {
      schema: {
        tags,
        summary: "Download the domain's certificate and private key (ZIP)",
        description: 'A ZIP with cert.pem (the leaf), chain.pem (intermediates), fullchain.pem (both) and privkey.pem (mode 0600). 409 while no certificate has been issued; its `task` says where issuance stands.',
        params: DomainParams,
        response: { 200: { description: 'application/zip', content: { 'application/zip': { schema: Type.String({ format: 'binary' }) } } }, ...errorResponses(404), 409: CONFLICT_WITH_TASK },
      },
    },
    async (request, reply) => {
      const head = await ownZoneHead(app, request.params.domain, request.user.id);
      const { domain } = head;
      // A claim beside another account's (issue 26) has no certificate: the name's is the holder's.
      const cert = (await holdsName(app, head)) ? await app.store.getCertificate(domain.domain) : undefined;
      if (!cert) {
        const task = await app.tasks.forDomain(domain.ownerId, domain.domain);
        const why = !domain.ssl ? 'ssl is off for the domain' : task ? `its certificate task is ${task.status}${task.error ? `: ${task.error}` : ''}` : 'no certificate task exists yet';
        return sendProblem(reply, { ...problem('CONFLICT', `${domain.domain} has no certificate yet (${why})`), task: task ? renderTask(task) : null } as ReturnType<typeof problem>);
      }
      const { key } = withOpenKey(app.secrets, cert);
      const zip = new yazl.ZipFile();
      const mtime = new Date(cert.updated);
      const add = (text: string, name: string, mode: number) => zip.addBuffer(Buffer.from(text), name, { mtime, mode });
      add(cert.cert, 'cert.pem', 0o100644);
      add(cert.chain, 'chain.pem', 0o100644);
      add(cert.cert + cert.chain, 'fullchain.pem', 0o100644);
      add(key, 'privkey.pem', 0o100600);
      zip.end();
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${domain.domain}-certificate-${cert.notAfter.slice(0, 10)}.zip"`)
        // A private key: never kept by a cache on the way.
        .header('cache-control', 'no-store')
        .send(zip.outputStream as unknown as string);
    },
  );
}
