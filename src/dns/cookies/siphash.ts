// SipHash-2-4 (Aumasson & Bernstein), the MAC RFC 9018 names for interoperable DNS server
// cookies. 64-bit words as pairs of 32-bit halves: no BigInt on the query path.

// The state: four 64-bit words as high and low halves. Module-level, so a hash allocates nothing
// but its result (hashing is synchronous: no two calls interleave).
let v0h = 0;
let v0l = 0;
let v1h = 0;
let v1l = 0;
let v2h = 0;
let v2l = 0;
let v3h = 0;
let v3l = 0;

function round(): void {
  // v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
  let lo = (v0l + v1l) >>> 0;
  v0h = (v0h + v1h + (lo < v0l ? 1 : 0)) >>> 0;
  v0l = lo;
  let h = v1h;
  v1h = ((h << 13) | (v1l >>> 19)) >>> 0;
  v1l = ((v1l << 13) | (h >>> 19)) >>> 0;
  v1h = (v1h ^ v0h) >>> 0;
  v1l = (v1l ^ v0l) >>> 0;
  h = v0h;
  v0h = v0l;
  v0l = h;
  // v2 += v3; v3 = rotl(v3, 16); v3 ^= v2
  lo = (v2l + v3l) >>> 0;
  v2h = (v2h + v3h + (lo < v2l ? 1 : 0)) >>> 0;
  v2l = lo;
  h = v3h;
  v3h = ((h << 16) | (v3l >>> 16)) >>> 0;
  v3l = ((v3l << 16) | (h >>> 16)) >>> 0;
  v3h = (v3h ^ v2h) >>> 0;
  v3l = (v3l ^ v2l) >>> 0;
  // v0 += v3; v3 = rotl(v3, 21); v3 ^= v0
  lo = (v0l + v3l) >>> 0;
  v0h = (v0h + v3h + (lo < v0l ? 1 : 0)) >>> 0;
  v0l = lo;
  h = v3h;
  v3h = ((h << 21) | (v3l >>> 11)) >>> 0;
  v3l = ((v3l << 21) | (h >>> 11)) >>> 0;
  v3h = (v3h ^ v0h) >>> 0;
  v3l = (v3l ^ v0l) >>> 0;
  // v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
  lo = (v2l + v1l) >>> 0;
  v2h = (v2h + v1h + (lo < v2l ? 1 : 0)) >>> 0;
  v2l = lo;
  h = v1h;
  v1h = ((h << 17) | (v1l >>> 15)) >>> 0;
  v1l = ((v1l << 17) | (h >>> 15)) >>> 0;
  v1h = (v1h ^ v2h) >>> 0;
  v1l = (v1l ^ v2l) >>> 0;
  h = v2h;
  v2h = v2l;
  v2l = h;
}

function compress(ml: number, mh: number): void {
  v3l = (v3l ^ ml) >>> 0;
  v3h = (v3h ^ mh) >>> 0;
  round();
  round();
  v0l = (v0l ^ ml) >>> 0;
  v0h = (v0h ^ mh) >>> 0;
}

const le32 = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/** SipHash-2-4 of `message` under a 16-byte key; the 8-byte result in little-endian order. */
export function siphash24(key: Uint8Array, message: Uint8Array): Buffer {
  if (key.length !== 16) throw new Error('SipHash needs a 16-byte key');
  const k0l = le32(key, 0);
  const k0h = le32(key, 4);
  const k1l = le32(key, 8);
  const k1h = le32(key, 12);
  // v = k ^ "somepseudorandomlygeneratedbytes"
  v0h = (k0h ^ 0x736f6d65) >>> 0;
  v0l = (k0l ^ 0x70736575) >>> 0;
  v1h = (k1h ^ 0x646f7261) >>> 0;
  v1l = (k1l ^ 0x6e646f6d) >>> 0;
  v2h = (k0h ^ 0x6c796765) >>> 0;
  v2l = (k0l ^ 0x6e657261) >>> 0;
  v3h = (k1h ^ 0x74656462) >>> 0;
  v3l = (k1l ^ 0x79746573) >>> 0;

  const length = message.length;
  const whole = length - (length % 8);
  for (let i = 0; i < whole; i += 8) compress(le32(message, i), le32(message, i + 4));
  // The last block: the remaining bytes, and the message length (mod 256) in the top byte.
  let lastLo = 0;
  let lastHi = (length & 0xff) << 24;
  for (let i = whole; i < length; i++) {
    const shift = (i - whole) * 8;
    if (shift < 32) lastLo |= message[i]! << shift;
    else lastHi |= message[i]! << (shift - 32);
  }
  compress(lastLo >>> 0, lastHi >>> 0);

  v2l = (v2l ^ 0xff) >>> 0;
  round();
  round();
  round();
  round();
  const out = Buffer.allocUnsafe(8);
  out.writeUInt32LE((v0l ^ v1l ^ v2l ^ v3l) >>> 0, 0);
  out.writeUInt32LE((v0h ^ v1h ^ v2h ^ v3h) >>> 0, 4);
  return out;
}
