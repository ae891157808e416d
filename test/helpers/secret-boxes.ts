/**
 * Secret boxes for the tests, one per secret key and process. `createSecretBox` derives the key from
 * IFW_SECRET_KEY with scrypt, about 50 ms of CPU each time, and with a secret key set it uses nothing
 * else (the data directory serves only the key file of a service without one): a box made once per
 * key behaves exactly as a new one would, for every test of a vitest worker. The tests of
 * `createSecretBox` itself (key files, a changed key) make their own.
 */
import os from 'node:os';
import { createSecretBox, type SecretBox } from '../../src/rest-source/secrets.js';

const boxes = new Map<string, SecretBox>();

/** The box sealing with IFW_SECRET_KEY `secretKey`, made at its first use in this process. */
export function secretBoxFor(secretKey: string): SecretBox {
  let box = boxes.get(secretKey);
  if (box === undefined) {
    box = createSecretBox({ secretKey, dataDir: os.tmpdir() });
    boxes.set(secretKey, box);
  }
  return box;
}
