// At start of a process that runs the API: private keys are kept sealed, so a store holding
// certificates (or an ACME account) needs the operator's key, and the right one. Keys stored in
// the clear by an older release are sealed now.
import type { Logger } from 'pino';
import type { CertConfig } from '../config.ts';
import type { Store } from '../store/types.ts';
import { SecretBox } from './secret-box.ts';

/** The box for this process's keys; throws an Error with the operator's next step when it cannot start. */
const SEALED_MARK = 'private-keys-sealed';

export async function prepareSecrets(store: Store, config: CertConfig, log: Logger): Promise<SecretBox | undefined> {
  const box = config.secretKey ? new SecretBox(config.secretKey) : undefined;
  // Once every key has been sealed, a start reads one certificate (to prove the operator key),
  // not all of them: what this release writes is always sealed.
  const sealedBefore = box !== undefined && (await store.getDoc('meta', SEALED_MARK)) !== undefined;
  let checked = false;
  let sealedNow = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listCertificates({ limit: sealedBefore ? 1 : 500, cursor });
    if (page.items.length > 0 && !box) {
      throw new Error('the store holds certificates, whose private keys are kept sealed: set PALISADE_SECRET_KEY (or PALISADE_SECRET_KEY_FILE) to the operator key');
    }
    for (const cert of page.items) {
      if (SecretBox.isSealed(cert.key)) {
        // One key opened proves the operator key; a wrong key fails here, not at an export.
        if (!checked) box!.open(cert.key);
        checked = true;
      } else {
        await store.putCertificate({ ...cert, key: box!.seal(cert.key) });
        sealedNow++;
      }
    }
    cursor = sealedBefore ? undefined : page.next;
  } while (cursor);
  if (box && !sealedBefore) await store.putDoc('meta', SEALED_MARK, { at: new Date().toISOString() });
  if (!box && (await store.listDocs('acme', { limit: 1 })).items.length > 0) {
    throw new Error('the store holds an ACME account, whose key is kept sealed: set PALISADE_SECRET_KEY (or PALISADE_SECRET_KEY_FILE)');
  }
  if (sealedNow > 0) log.info({ certificates: sealedNow }, 'certificates: private keys stored in the clear are sealed now');
  return box;
}
