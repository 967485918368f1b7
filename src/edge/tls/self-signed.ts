// The edge's default certificate, for handshakes that name no domain it has a certificate for
// (unknown SNI, no SNI, a domain still without one): self-signed, made at start, naming only the
// node — never a customer. A minimal X.509 v1 certificate (RFC 5280 without extensions), DER by
// hand: this is all it needs, and no dependency is worth it.
import { generateKeyPairSync, sign } from 'node:crypto';

function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const SEQUENCE = 0x30;
const SET = 0x31;
const ECDSA_WITH_SHA256 = der(SEQUENCE, Buffer.from('06082a8648ce3d040302', 'hex'));
const COMMON_NAME = Buffer.from('0603550403', 'hex');

const utcTime = (date: Date): Buffer => der(0x17, Buffer.from(`${date.toISOString().slice(2, 19).replace(/[-:T]/g, '')}Z`));
const name = (cn: string): Buffer => der(SEQUENCE, der(SET, der(SEQUENCE, COMMON_NAME, der(0x0c, Buffer.from(cn, 'utf8')))));

/** A fresh P-256 key and a self-signed certificate for `commonName`, valid from a day ago for `days`. */
export function selfSignedCertificate(commonName: string, days = 3650): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const serial = Buffer.from([0x01, ...Array.from({ length: 15 }, () => Math.floor(Math.random() * 256))]);
  const from = new Date(Date.now() - 86_400_000);
  const to = new Date(Date.now() + days * 86_400_000);
  const subject = name(commonName.slice(0, 64));
  const tbs = der(SEQUENCE, der(0x02, serial), ECDSA_WITH_SHA256, subject, der(SEQUENCE, utcTime(from), utcTime(to)), subject, publicKey.export({ type: 'spki', format: 'der' }));
  const signature = sign('sha256', tbs, privateKey);
  const certificate = der(SEQUENCE, tbs, ECDSA_WITH_SHA256, der(0x03, Buffer.from([0]), signature));
  const body = certificate.toString('base64').replace(/.{64}/g, '$&\n');
  return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, cert: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n` };
}
