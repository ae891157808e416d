/**
 * Console sessions, kept in the database so that they survive a restart and hold on every node of a
 * PostgreSQL deployment. The cookie carries a random token; the table keeps only its SHA-256, so a
 * read of the table signs no one in. Each session has its own CSRF token (synchronizer pattern),
 * an idle expiry renewed by activity and an absolute expiry that activity never moves.
 *
 * A session names its user by `user_id`, which is never reused (a user deleted and created again under
 * the same name is someone else), and holds the user's security stamp of the moment of sign-in. Every
 * change of the user's password, permission sets or enabled state gives the user a new stamp
 * (accounts/accounts.ts), whoever makes it and in whichever process: a session whose stamp is not the
 * user's any more has ended. Resuming reads session and user in one statement, so the answer is the
 * database's of that moment, never a cache's.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../auth/model.js';
import { parseStoredPermissionSets } from '../auth/permission-sets.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../storage/db.js';

export interface Session {
  readonly userId: string;
  readonly csrfToken: string;
  readonly tokenHash: string;
}

export interface SessionPolicy {
  readonly idleMs: number;
  readonly absoluteMs: number;
  /** Live sessions one user may hold; signing in once more ends the oldest. */
  readonly maxPerUser: number;
}

/** The user a session was started for, as the user is now. */
export interface SessionUser {
  readonly session: Session;
  readonly user: Principal;
}

/** Activity renews the idle expiry at most this often, so that a busy page does not write on every request. */
const TOUCH_EVERY_MS = 60_000;

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

export interface Sessions {
  /**
   * Starts a session for a user whose password was verified under `securityStamp`; answers the
   * cookie's token (shown to no one else).
   */
  create(userId: string, securityStamp: string): Promise<{ token: string; session: Session }>;
  /** The live session of a cookie token and its user as they are now; undefined when unknown, expired or ended by an account change. */
  resume(token: string): Promise<SessionUser | undefined>;
  end(session: Session): Promise<void>;
}

export function createSessions(db: Db, clock: Clock, policy: SessionPolicy): Sessions {
  const iso = (ms: number) => new Date(ms).toISOString();
  const forget = (tokenHash: string) => db.deleteFrom('ifw_console_session').where('token_hash', '=', tokenHash).execute();
  return {
    async create(userId, securityStamp) {
      const token = newToken();
      const now = clock().getTime();
      const session: Session = { userId, csrfToken: newToken(), tokenHash: hashToken(token) };
      await db
        .insertInto('ifw_console_session')
        .values({
          token_hash: session.tokenHash,
          user_id: userId,
          security_stamp: securityStamp,
          csrf_token: session.csrfToken,
          created_at: iso(now),
          last_seen_at: iso(now),
          expires_at: iso(now + policy.absoluteMs),
        })
        .execute();
      // The user's sessions beyond the newest maxPerUser end, and so do those of an older stamp.
      const kept = db
        .selectFrom('ifw_console_session')
        .select('token_hash')
        .where('user_id', '=', userId)
        .where('security_stamp', '=', securityStamp)
        .orderBy('created_at', 'desc')
        .orderBy('token_hash', 'desc')
        .limit(policy.maxPerUser);
      await db
        .deleteFrom('ifw_console_session')
        .where('user_id', '=', userId)
        .where('token_hash', 'not in', (eb) => eb.selectFrom(kept.as('kept')).select('kept.token_hash'))
        .execute();
      // Expired sessions of anyone go when someone signs in: the table never grows past the live ones and the recent.
      await db.deleteFrom('ifw_console_session').where('expires_at', '<=', iso(now)).execute();
      return { token, session };
    },
    async resume(token) {
      if (token.length === 0 || token.length > 100) return undefined;
      const tokenHash = hashToken(token);
      const row = await db
        .selectFrom('ifw_console_session as s')
        .leftJoin('ifw_user as u', 'u.user_id', 's.user_id')
        .select([
          's.user_id',
          's.security_stamp as session_stamp',
          's.csrf_token',
          's.last_seen_at',
          's.expires_at',
          'u.security_stamp as user_stamp',
          'u.user_name',
          'u.enabled',
          'u.permission_sets',
        ])
        .where('s.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      const now = clock().getTime();
      const lastSeen = Date.parse(row.last_seen_at);
      const { user_name: userName, permission_sets: permissionSets } = row;
      // Ended by a change of the user (or its deletion), or expired.
      const ended = row.user_stamp !== row.session_stamp || row.enabled !== 1 || userName === null || permissionSets === null;
      if (ended || now >= Date.parse(row.expires_at) || now - lastSeen >= policy.idleMs) {
        await forget(tokenHash);
        return undefined;
      }
      if (now - lastSeen >= TOUCH_EVERY_MS)
        await db
          .updateTable('ifw_console_session')
          .set({ last_seen_at: iso(now) })
          .where('token_hash', '=', tokenHash)
          .execute();
      return {
        session: { userId: row.user_id, csrfToken: row.csrf_token, tokenHash },
        user: { kind: 'user', name: userName, permissionSets: parseStoredPermissionSets(permissionSets) },
      };
    },
    async end(session) {
      await forget(session.tokenHash);
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
