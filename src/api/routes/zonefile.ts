// /domains/{domain}/zonefile: the zone as a BIND-format zone file, out (GET) and in (POST,
// text/dns, ?dry_run=true). The parsing, comparing and applying are ../../zonefile's.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../errors.ts';
import { APEX_NS_TTL, parseSoaValue, SOA_DEFAULTS } from '../../model/record-values.ts';
import { TYPE } from '../../model/record-types.ts';
import { servedRevision } from '../../model/domain.ts';
import type { Zone } from '../../store/types.ts';
import type { Config } from '../../config.ts';
import { importZoneFile } from '../../zonefile/import.ts';
import { Slices } from '../../zonefile/slices.ts';
import { writeZoneFile } from '../../zonefile/write.ts';
import { DnsRecord } from '../../model/record.ts';
import { DomainParams, errorResponses } from '../schemas.ts';
import { ownZone, zoneName } from '../zone-access.ts';


/** A zone file may be this many times the API's body limit (a zone of 20,000 records is ~1 MiB). */
export const ZONEFILE_BODY_FACTOR = 8;

/** The zone file of a zone as our name servers serve it: their SOA and NS set, then the records. */
export function exportZone(zone: Zone, config: Config): string {
  const soaRecord = zone.records.filter((r) => r.type === TYPE.SOA).sort((a, b) => a.id - b.id)[0];
  const custom = soaRecord && parseSoaValue(soaRecord.value);
  const nameservers = zone.domain.claim?.nameservers ?? config.nameservers;
  const records = zone.records.filter((r) => !r.acme && r.type !== TYPE.SOA).sort((a, b) => (a.name === b.name ? a.type - b.type || a.id - b.id : a.name === '@' ? -1 : b.name === '@' ? 1 : a.name < b.name ? -1 : 1));
  return writeZoneFile(
    {
      apex: zone.domain.domain,
      soa: {
        ttl: soaRecord?.ttl ?? SOA_DEFAULTS.ttl,
        mname: nameservers[0]!,
        rname: custom?.rname ?? config.hostmaster,
        serial: servedRevision(zone.domain) >>> 0,
        refresh: custom?.refresh ?? SOA_DEFAULTS.refresh,
        retry: custom?.retry ?? SOA_DEFAULTS.retry,
        expire: custom?.expire ?? SOA_DEFAULTS.expire,
        minimum: custom?.minimum ?? SOA_DEFAULTS.minimum,
      },
      ns: { ttl: APEX_NS_TTL, names: nameservers },
    },
    records,
  );
}

const LineNote = Type.Object({ line: Type.Integer(), message: Type.String() });
const ImportResult = Type.Object({
  dry_run: Type.Boolean(),
  revision: Type.Integer({ description: "The zone's revision after the import (unchanged on a dry run or when nothing changes)" }),
  added: Type.Array(Type.Object({ line: Type.Integer(), record: DnsRecord })),
  changed: Type.Array(Type.Object({ line: Type.Integer(), record: DnsRecord, ttl_before: Type.Integer() })),
  removed: Type.Array(DnsRecord),
  unchanged: Type.Integer({ description: 'Records the file holds as they are' }),
  skipped: Type.Array(LineNote, { description: 'Lines not taken: the SOA and apex NS set (the service\'s), types not served' }),
});

/** JSON text of an object whose array fields may be long, pausing for the event loop between slices. */
async function slicedJson(value: object): Promise<string> {
  const slices = new Slices();
  const parts: string[] = [];
  for (const [field, item] of Object.entries(value)) {
    if (!Array.isArray(item)) {
      parts.push(`${JSON.stringify(field)}:${JSON.stringify(item)}`);
      continue;
    }
    const out: string[] = [];
    for (const element of item) {
      if (slices.due()) await slices.pause();
      out.push(JSON.stringify(element));
    }
    parts.push(`${JSON.stringify(field)}:[${out.join(',')}]`);
  }
  return `{${parts.join(',')}}`;
}

export const zoneFileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['dns records'];
  const bodyLimit = app.config.api.bodyLimit * ZONEFILE_BODY_FACTOR;
  // Only this plugin's routes take text/dns; every other route still answers 415 to it.
  app.addContentTypeParser('text/dns', { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, body));

  app.get(
    '/domains/:domain/zonefile',
    {
      schema: {
        tags,
        summary: "The domain's zone as a BIND-format zone file (text/dns)",
        description: 'The SOA and apex NS set as our name servers serve them, then every record. Geo-targeted variants, which zone files cannot express, are `;palisade-geo ID[,ID…] RECORD` comments that an import reads back.',
        params: DomainParams,
        response: { 200: { description: 'The zone file', content: { 'text/dns': { schema: Type.String() } } } as never, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const zone = await ownZone(app, request.params.domain, request.user.id);
      return reply
        .type('text/dns; charset=utf-8')
        .header('content-disposition', `attachment; filename="${zone.domain.domain}.zone"`)
        .send(exportZone(zone, app.config));
    },
  );

  app.post(
    '/domains/:domain/zonefile',
    {
      bodyLimit,
      // Any other body (JSON included) is 415 before the schema sees it.
      preValidation: async (request) => {
        if (typeof request.body !== 'string') throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'send a zone file (JSON is not accepted here) with `Content-Type: text/dns`');
      },
      schema: {
        tags,
        summary: "Replace the domain's records with a zone file's (text/dns)",
        description:
          'BIND form: $ORIGIN, $TTL, relative names, @, ( … ), comments, escapes, several TXT strings, class IN optional; $INCLUDE is refused. ' +
          'The zone then holds exactly the file\'s records (the SOA and apex NS set stay the service\'s; lines of other types are skipped and listed). ' +
          'One atomic change, one revision; any bad line refuses the whole file (422, each error naming its line). `?dry_run=true` says what would change and changes nothing. A file with no records, which would remove every record, is refused (422) unless `?replace=all`. Lines over 65,536 characters and fields over 16,384 are refused at once.',
        params: DomainParams,
        querystring: Type.Object(
          {
            dry_run: Type.Optional(Type.Boolean({ description: 'Only say what would change' })),
            replace: Type.Optional(Type.Literal('all', { description: 'Apply a file with no records, removing every record (refused without it)' })),
          },
          { additionalProperties: false },
        ),
        body: Type.String({ description: 'The zone file' }),
        response: { 200: ImportResult, ...errorResponses(404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const name = zoneName(request.params.domain);
      const outcome = await importZoneFile(app.store, name, request.user.id, request.body, { dryRun: request.query.dry_run === true, maxRecords: request.user.limits.max_records_per_domain, replaceAll: request.query.replace === 'all' });
      // 20,000 records make megabytes of JSON: written in slices, not in one step (the schema documents the shape).
      return reply.type('application/json; charset=utf-8').send((await slicedJson(outcome)) as never);
    },
  );
};
