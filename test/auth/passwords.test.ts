import { parseOptions, verify } from '@node-rs/argon2';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, parseBasicAuthorization, passwordProblem, verifyPassword, type HashVerifier } from '../../src/auth/passwords.js';

const PASSWORD = 'correct horse battery staple';
let stored: string;
beforeAll(async () => {
  stored = await hashPassword(PASSWORD);
});

/** A verifier that records which hashes it was asked about and delegates to the real argon2 verify. */
function recordingVerifier(): HashVerifier & { hashes: string[] } {
  const hashes: string[] = [];
  const verifier = (async (h: string, plain: string) => {
    hashes.push(h);
    return verify(h, plain);
  }) as HashVerifier & { hashes: string[] };
  verifier.hashes = hashes;
  return verifier;
}

describe('hashPassword', () => {
  it('produces an argon2id PHC string with m=19456, t=2, p=1', () => {
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  });

  it('salts every hash, so the same password hashes differently twice', async () => {
    expect(await hashPassword(PASSWORD)).not.toBe(stored);
  });
});

describe('verifyPassword', () => {
  it('accepts the right password', async () => {
    expect(await verifyPassword(stored, PASSWORD)).toBe(true);
  });

  it('refuses a wrong password', async () => {
    expect(await verifyPassword(stored, 'correct horse battery stapler')).toBe(false);
  });

  it('refuses the empty password', async () => {
    expect(await verifyPassword(stored, '')).toBe(false);
  });

  it('matches a password whose accents are composed differently (NFKC)', async () => {
    const composed = await hashPassword('caf\u00e9 au lait, bitte');
    expect(await verifyPassword(composed, 'cafe\u0301 au lait, bitte')).toBe(true);
  });

  it('runs one real argon2id verification against a dummy hash for an unknown user, then answers false', async () => {
    const verifier = recordingVerifier();
    expect(await verifyPassword(undefined, PASSWORD, verifier)).toBe(false);
    expect(verifier.hashes).toHaveLength(1);
    const dummy = verifier.hashes[0]!;
    expect(dummy).not.toBe(stored);
    // Same cost as a real stored hash, so an unknown user takes the wrong-password path.
    expect(parseOptions(dummy)).toEqual(parseOptions(stored));
  });

  it('answers false for an unknown user even when the verifier would say yes', async () => {
    expect(await verifyPassword(undefined, PASSWORD, () => Promise.resolve(true))).toBe(false);
  });

  it('verifies a known user exactly once, against the stored hash', async () => {
    const verifier = recordingVerifier();
    expect(await verifyPassword(stored, 'wrong password here', verifier)).toBe(false);
    expect(verifier.hashes).toEqual([stored]);
  });

  it.each([
    ['not a hash at all', 'garbage'],
    ['an empty string', ''],
    ['a PHC string without a hash part', '$argon2id$v=19$m=19456,t=2,p=1$AAAA'],
    ['a hash that is too short', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$'],
    ['a bcrypt hash', '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'],
  ])('answers false instead of throwing for a malformed stored hash: %s', async (_, malformed) => {
    expect(await verifyPassword(malformed, PASSWORD)).toBe(false);
  });
});

describe('passwordProblem', () => {
  it.each<[string, string, string | null]>([
    ['11 characters', 'a'.repeat(11), 'password must be at least 12 characters long'],
    ['empty', '', 'password must be at least 12 characters long'],
    ['12 characters', 'a'.repeat(12), null],
    ['1024 characters', 'a'.repeat(1024), null],
    ['1025 characters', 'a'.repeat(1025), 'password must be at most 1024 characters long (and 1024 bytes in UTF-8)'],
    [
      '400 characters of 3 bytes each (1200 bytes)',
      '\u20ac'.repeat(400),
      'password must be at most 1024 characters long (and 1024 bytes in UTF-8)',
    ],
    ['15 MB, refused before NFKC', '\ufdfa'.repeat(5_000_000), 'password must be at most 1024 characters long (and 1024 bytes in UTF-8)'],
    ['60 characters that NFKC makes 1080', '\ufdfa'.repeat(60), 'password must be at most 1024 characters long'],
    ['11 emoji (22 UTF-16 units) counted as characters', '\u{1F600}'.repeat(11), 'password must be at least 12 characters long'],
    ['12 emoji', '\u{1F600}'.repeat(12), null],
  ])('%s', (_, plain, expected) => {
    expect(passwordProblem(plain)).toBe(expected);
  });
});

describe('parseBasicAuthorization', () => {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

  it.each<[string, string | undefined, { username: string; password: string } | null]>([
    ['user and password', `Basic ${b64('alice:s3cret')}`, { username: 'alice', password: 's3cret' }],
    ['a password containing colons', `Basic ${b64('alice:a:b::c')}`, { username: 'alice', password: 'a:b::c' }],
    ['a lower-case scheme', `basic ${b64('alice:pw')}`, { username: 'alice', password: 'pw' }],
    ['an upper-case scheme', `BASIC ${b64('alice:pw')}`, { username: 'alice', password: 'pw' }],
    ['surrounding whitespace and several spaces', `  Basic   ${b64('alice:pw')}  `, { username: 'alice', password: 'pw' }],
    ['an empty password', `Basic ${b64('alice:')}`, { username: 'alice', password: '' }],
    ['UTF-8 user and password', `Basic ${b64('jürgen:pä ss wört')}`, { username: 'jürgen', password: 'pä ss wört' }],
    ['no header', undefined, null],
    ['an empty header', '', null],
    ['the scheme alone', 'Basic', null],
    ['the scheme and a space', 'Basic ', null],
    ['a bearer token', 'Bearer abc.def.ghi', null],
    ['a scheme merely starting with Basic', `Basicx ${b64('alice:pw')}`, null],
    ['no colon', `Basic ${b64('alice')}`, null],
    ['an empty user name', `Basic ${b64(':pw')}`, null],
    ['characters outside base64', 'Basic YWxp!2U6cHc=', null],
    ['base64 missing its padding', `Basic ${b64('alice:pw').replace(/=+$/, '')}`, null],
    ['two tokens', `Basic ${b64('alice:pw')} ${b64('bob:pw')}`, null],
    ['invalid UTF-8', `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`, null],
    ['a control character in the password', `Basic ${b64('alice:p\nw')}`, null],
    ['a control character in the user name', `Basic ${b64('al\u0000ice:pw')}`, null],
  ])('%s', (_, header, expected) => {
    expect(parseBasicAuthorization(header)).toEqual(expected);
  });
});
