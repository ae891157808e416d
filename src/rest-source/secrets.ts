/**
 * Encryption of stored secrets (connection passwords, tokens, API keys, client secrets).
 *
 * AES-256-GCM, a random 12-byte IV per value, stored as `v1:<iv>:<tag>:<ciphertext>` (base64). The key
 * is derived from IFW_SECRET_KEY with scrypt (fixed salt: the same IFW_SECRET_KEY always gives the same
 * key); without IFW_SECRET_KEY a random 32-byte key is generated on first start and kept in
 * `<dataDir>/secret.key` (mode 0600), then reused. GCM authenticates: a value sealed under another key
 * fails to open with a message saying so, instead of yielding garbage.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { AppError } from '../core/errors.js';

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/** A stored secret that cannot be opened: the key changed, or the value is damaged. */
export class SecretDecryptionError extends AppError {
  constructor(message: string) {
    super(500, 'internalError', message);
    this.name = 'SecretDecryptionError';
  }
}

export const SECRET_KEY_FILE = 'secret.key';

const VERSION = 'v1';
const IV_BYTES = 12;
const KEY_BYTES = 32;
const SCRYPT_SALT = 'ifw stored secrets v1';

function deriveKey(secretKey: string): Buffer {
  return scryptSync(secretKey, SCRYPT_SALT, KEY_BYTES, { N: 16_384, r: 8, p: 1 });
}

/** Reads `<dataDir>/secret.key`, or creates it (exclusively, so two processes starting together agree). */
function keyFromFile(file: string): Buffer {
  const read = (): Buffer => {
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== KEY_BYTES)
      throw new Error(`${file} does not hold a ${KEY_BYTES}-byte base64 key; restore it from a backup (or set IFW_SECRET_KEY)`);
    return key;
  };
  if (fs.existsSync(file)) return read();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  try {
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'EEXIST') return read();
    throw err;
  }
  fs.chmodSync(file, 0o600);
  return key;
}

export function createSecretBox(config: Pick<Config, 'secretKey' | 'dataDir'>): SecretBox {
  const keyFile = path.join(config.dataDir, SECRET_KEY_FILE);
  const key = config.secretKey !== undefined ? deriveKey(config.secretKey) : keyFromFile(keyFile);
  const source = config.secretKey !== undefined ? 'IFW_SECRET_KEY is set' : `IFW_SECRET_KEY is not set: the key in ${keyFile} was used`;
  const wrongKey = () =>
    new SecretDecryptionError(
      `stored secrets cannot be decrypted: IFW_SECRET_KEY differs from the key they were saved with (${source}); restore that key, or enter the secrets again`,
    );

  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext, ...rest] = sealed.split(':');
      if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
        throw new SecretDecryptionError(
          `stored secrets cannot be decrypted: the stored value is not in a known format (expected ${VERSION}:…)`,
        );
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
        decipher.setAuthTag(Buffer.from(tag, 'base64'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
      } catch {
        throw wrongKey();
      }
    },
  };
}
