// Private keys at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the
// operator's PALISADE_SECRET_KEY. A sealed text names its format ("pk1:"), so a store may hold
// keys sealed now beside keys stored in the clear by an older release (read as they are, and
// sealed at the next start that has the key). A wrong operator key fails to open (the GCM tag),
// never yields a wrong private key.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'pk1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  private readonly key: Buffer;

  constructor(operatorKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', operatorKey, 'palisade', 'private keys at rest, v1', 32));
  }

  static isSealed(text: string): boolean {
    return text.startsWith(PREFIX);
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plain text of a sealed text (a text stored in the clear comes back as it is). */
  open(text: string): string {
    if (!SecretBox.isSealed(text)) return text;
    const raw = Buffer.from(text.slice(PREFIX.length), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('a sealed private key is cut short');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('a private key in the store does not open with PALISADE_SECRET_KEY (another key sealed it, or it is damaged)');
    }
  }
}

/** The certificate with its key opened: what an edge or an export needs. */
export function withOpenKey<T extends { key: string }>(box: SecretBox | undefined, cert: T): T {
  if (!SecretBox.isSealed(cert.key)) return cert;
  if (!box) throw new Error('a private key in the store is sealed: set PALISADE_SECRET_KEY (or PALISADE_SECRET_KEY_FILE) to the operator key');
  return { ...cert, key: box.open(cert.key) };
}
