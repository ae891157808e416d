/**
 * Service-user passwords: argon2id hashing, verification that takes the same path for an unknown
 * user as for a wrong password, the password policy, and parsing of `Authorization: Basic`.
 */
import { hash, verify, type Options } from '@node-rs/argon2';

/**
 * OWASP's minimum argon2id configuration (19 MiB, 2 passes, 1 lane). Stated explicitly rather than
 * left to the library's defaults so that a dependency upgrade cannot silently change the cost of new
 * hashes, and so that the dummy hash below is guaranteed to cost what a real one costs. ~20-40 ms per
 * verification here: high enough to make offline guessing expensive, low enough that a burst of
 * Basic requests does not starve the event loop's thread pool.
 */
const ARGON2_OPTIONS: Options = {
  // The package's `Algorithm` is a declared const enum with no runtime value; 2 is Argon2id.
  algorithm: 2,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

/**
 * Hash of a random, discarded password with the same parameters as ARGON2_OPTIONS. Verifying against
 * it for an unknown user makes "no such user" cost one full argon2id verification, like a wrong
 * password. A test pins its parameters to ARGON2_OPTIONS.
 */
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$pK/CRB2FGi6aNDA6cV7vTA$m5z11FqxacbZyQwDP16svmO9yNge4kLAg5V+xfcKpkU';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;
/**
 * The most bytes (UTF-8) a password may have, checked before anything else is done with it: NFKC can
 * make a text up to 18 times longer, and argon2 reads all of it, so a huge "password" would be work
 * for anyone to cause.
 */
export const PASSWORD_MAX_BYTES = 1024;

/** Whether a password is short enough to be normalised and verified at all. */
export const passwordFits = (plain: string): boolean =>
  plain.length <= PASSWORD_MAX_BYTES && Buffer.byteLength(plain, 'utf8') <= PASSWORD_MAX_BYTES;

/** The verification primitive; a parameter so that tests can observe which hash was checked. */
export type HashVerifier = (storedHash: string, plain: string) => Promise<boolean>;

const argon2Verify: HashVerifier = (storedHash, plain) => verify(storedHash, plain);

/**
 * Passwords are NFKC-normalised before hashing and verifying (NIST SP 800-63B 5.1.1.2), so the same
 * password typed on systems that compose accents differently still matches.
 */
const normalize = (plain: string): string => plain.normalize('NFKC');

export async function hashPassword(plain: string): Promise<string> {
  if (!passwordFits(plain)) throw new Error(`a password over ${PASSWORD_MAX_BYTES} bytes is refused before it is hashed`);
  return hash(normalize(plain), ARGON2_OPTIONS);
}

/**
 * True only when `storedHash` is a valid hash of `plain`. With no stored hash (unknown user) it still
 * runs one verification against DUMMY_HASH and answers false. A malformed stored hash answers false
 * instead of throwing. The comparison inside argon2 is constant-time.
 */
export async function verifyPassword(
  storedHash: string | undefined,
  plain: string,
  verifier: HashVerifier = argon2Verify,
): Promise<boolean> {
  if (!passwordFits(plain)) return false;
  const normalized = normalize(plain);
  if (storedHash === undefined) {
    await verifier(DUMMY_HASH, normalized).catch(() => false);
    return false;
  }
  try {
    return await verifier(storedHash, normalized);
  } catch {
    return false;
  }
}

/** Why `plain` is not acceptable as a new password, or null. Lengths count characters, not UTF-16 units. */
export function passwordProblem(plain: string): string | null {
  if (!passwordFits(plain))
    return `password must be at most ${PASSWORD_MAX_LENGTH} characters long (and ${PASSWORD_MAX_BYTES} bytes in UTF-8)`;
  const length = [...normalize(plain)].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters long`;
  if (length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters long`;
  return null;
}

export interface BasicCredentials {
  username: string;
  password: string;
}

// eslint-disable-next-line no-control-regex -- RFC 7617: user-id and password must not contain control characters.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses `Basic base64(user:pass)` (RFC 7617): the scheme is case-insensitive, the password may
 * contain ':' (the user-id may not). Anything else (another scheme, non-canonical base64, invalid
 * UTF-8, no colon, an empty user-id, control characters) gives null.
 */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | null {
  if (header === undefined) return null;
  const match = /^\s*basic +([^\s]+)\s*$/i.exec(header);
  const token = match?.[1];
  if (token === undefined) return null;
  const bytes = Buffer.from(token, 'base64');
  // Node's decoder skips junk silently; re-encoding shows whether the token was real base64.
  if (bytes.toString('base64') !== token) return null;
  let decoded: string;
  try {
    decoded = utf8.decode(bytes);
  } catch {
    return null;
  }
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if (CONTROL_CHARACTERS.test(decoded)) return null;
  return { username, password };
}
