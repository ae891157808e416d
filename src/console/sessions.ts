/**
 * Console sessions, kept in the database so that they survive a restart and hold on every node of a
 * PostgreSQL deployment. The cookie carries a random token; the table keeps only its SHA-256, so a
 * read of the table signs no one in. Each session has its own CSRF token (synchronizer pattern),
 * an idle expiry renewed by activity and an absolute expiry that activity never moves.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.js';
import type { DB } from '../storage/schema.js';

export interface Session {
  readonly userName: string;
  readonly csrfToken: string;
  readonly tokenHash: string;
}

export interface SessionPolicy {
  readonly idleMs: number;
  readonly absoluteMs: number;
}

/** Activity renews the idle expiry at most this often, so that a busy page does not write on every request. */
const TOUCH_EVERY_MS = 60_000;

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

export interface Sessions {
  /** Starts a session; answers the cookie's token (shown to no one else). */
  create(userName: string): Promise<{ token: string; session: Session }>;
  /** The live session of a cookie token, its idle expiry renewed; undefined when unknown or expired. */
  resume(token: string): Promise<Session | undefined>;
  end(session: Session): Promise<void>;
  /** Ends every session of a user (password reset, disabled). */
  endAllOf(userName: string): Promise<void>;
}

export function createSessions(db: Kysely<DB>, clock: Clock, policy: SessionPolicy): Sessions {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    async create(userName) {
      const token = newToken();
      const now = clock().getTime();
      const session: Session = { userName, csrfToken: newToken(), tokenHash: hashToken(token) };
      await db
        .insertInto('ifw_console_session')
        .values({
          token_hash: session.tokenHash,
          user_name: userName,
          csrf_token: session.csrfToken,
          created_at: iso(now),
          last_seen_at: iso(now),
          expires_at: iso(now + policy.absoluteMs),
        })
        .execute();
      // Expired sessions of anyone go when someone signs in: the table never grows past the live ones and the recent.
      await db.deleteFrom('ifw_console_session').where('expires_at', '<=', iso(now)).execute();
      return { token, session };
    },
    async resume(token) {
      if (token.length === 0 || token.length > 100) return undefined;
      const tokenHash = hashToken(token);
      const row = await db.selectFrom('ifw_console_session').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      if (row === undefined) return undefined;
      const now = clock().getTime();
      const lastSeen = Date.parse(row.last_seen_at);
      if (now >= Date.parse(row.expires_at) || now - lastSeen >= policy.idleMs) {
        await db.deleteFrom('ifw_console_session').where('token_hash', '=', tokenHash).execute();
        return undefined;
      }
      if (now - lastSeen >= TOUCH_EVERY_MS)
        await db
          .updateTable('ifw_console_session')
          .set({ last_seen_at: iso(now) })
          .where('token_hash', '=', tokenHash)
          .execute();
      return { userName: row.user_name, csrfToken: row.csrf_token, tokenHash };
    },
    async end(session) {
      await db.deleteFrom('ifw_console_session').where('token_hash', '=', session.tokenHash).execute();
    },
    async endAllOf(userName) {
      await db.deleteFrom('ifw_console_session').where('user_name', '=', userName).execute();
    },
  };
}

/** Whether a submitted CSRF token is the session's, compared in constant time. */
export function csrfMatches(session: Session, submitted: string | undefined): boolean {
  if (submitted === undefined) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
