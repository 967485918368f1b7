// Operator commands: certificates put in by hand. Each entry is one `palisade admin` command (see
// ADMIN_USAGE in admin.ts); it reads the parsed arguments and returns what is printed.
import { readFileSync } from 'node:fs';
import { certificateFromPem, type CertificateState } from '../model/certificate.ts';
import { SecretBox } from '../certs/secret-box.ts';
import { certificateFit } from '../certs/cert-names.ts';
import { type AdminCommands, required, UsageError } from './admin-args.ts';

/** What the operator sees of a certificate: never its key. */
function certificateSummary(cert: CertificateState): Record<string, unknown> {
  const { key: _key, cert: _cert, chain: _chain, ...rest } = cert;
  return rest;
}

export const certsCommands: AdminCommands = {
  'cert put': async ({ store, values, arg, options }) => {
    const domain = required(arg, 'DOMAIN').toLowerCase();
    const zone = await store.getZoneHead(domain);
    if (!zone) throw new UsageError(`no domain ${domain}`);
    const read = (flag: 'cert' | 'key'): string => {
      try {
        return readFileSync(required(values[flag], flag), 'utf8');
      } catch (error) {
        throw new UsageError(`--${flag}: ${(error as Error).message}`);
      }
    };
    let cert;
    try {
      cert = certificateFromPem(domain, read('cert'), read('key'));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`the certificate cannot be used: ${(error as Error).message}`);
    }
    // Edges show a domain's certificate for its names: it may name nothing of anyone else's.
    const fit = certificateFit(zone.domain, cert, Date.now());
    if (fit.refusals.length > 0) throw new UsageError(`the certificate cannot be stored for ${domain}: ${fit.refusals.join('; ')}`);
    if (!options.secretKey) throw new UsageError('PALISADE_SECRET_KEY is not set: private keys are stored sealed with the operator key (set it as for the API)');
    const stored = await store.putCertificate({ ...cert, key: new SecretBox(options.secretKey).seal(cert.key) });
    const warnings = [
      ...(fit.uncovered.length > 0 ? [`it does not cover ${fit.uncovered.join(', ')}: edges answer those names with their own certificate`] : []),
      ...(zone.domain.ssl ? [] : [`ssl is off for ${domain}: edges refuse HTTPS for its names until it is on`]),
    ];
    return warnings.length > 0 ? { ...certificateSummary(stored), warnings } : certificateSummary(stored);
  },
  'cert remove': async ({ store, arg }) => {
    const domain = required(arg, 'DOMAIN').toLowerCase();
    if (!(await store.deleteCertificate(domain))) throw new UsageError(`no certificate for ${domain}`);
    return { removed: domain };
  },
  'cert list': async ({ store }) => {
    const all: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listCertificates({ limit: 500, cursor });
      all.push(...page.items.map(certificateSummary));
      cursor = page.next;
    } while (cursor);
    return all;
  },
};
