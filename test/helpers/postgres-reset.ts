/**
 * Puts a PostgreSQL database made from the run's template back into the state it was made in, for the
 * pool of migrated test databases (databases.ts): a database a test gave back is handed to the next
 * one in what `CREATE DATABASE … TEMPLATE` would give it, at a small part of its cost (a copy of the
 * 8.5 MB template is about 0.35 s of the server's CPU).
 *
 * What a test can leave, and how it goes:
 * - sessions, with their TEMP tables, advisory locks and LISTENs: every other client session of the
 *   database is terminated, as `drop database … with (force)` did;
 * - objects it made (target tables, functions, triggers, types, schemas…): dropped, by comparing the
 *   catalog with the one taken at the start;
 * - rows: the tables that differ from the start are emptied (with the tables whose foreign keys point
 *   at them), and the few the migrations fill get their rows back; sequences get their values.
 * The schema's fingerprint (columns, constraints, indexes, triggers, routines, settings…) is then
 * compared with the start's: if a test changed the template's own objects in a way not undone above
 * (an ALTER TABLE, say), the database is dropped and made again from the template instead.
 */
import pg from 'pg';

/** Namespaces a test could have put something in: not PostgreSQL's own, nor any session's TEMP one. */
const USER_NAMESPACES = `select oid from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema'`;

/** Every object a test could add, as `kind\tidentity`, in the order they can be dropped. */
const OBJECTS = `
select kind, name from (
  select 1 as rank, 'trigger' as kind, quote_ident(tgname) || ' on ' || tgrelid::regclass::text as name from pg_trigger where not tgisinternal
  union all select 1, 'rule', quote_ident(rulename) || ' on ' || ev_class::regclass::text from pg_rewrite
    where rulename <> '_RETURN' and ev_class in (select oid from pg_class where relnamespace in (${USER_NAMESPACES}))
  union all select 1, 'policy', quote_ident(polname) || ' on ' || polrelid::regclass::text from pg_policy
  union all select 2, case relkind when 'f' then 'foreign table' else 'table' end, oid::regclass::text from pg_class
    where relnamespace in (${USER_NAMESPACES}) and relkind in ('r', 'p', 'f')
  union all select 3, case relkind when 'v' then 'view' when 'm' then 'materialized view' when 'S' then 'sequence' else 'index' end, oid::regclass::text
    from pg_class where relnamespace in (${USER_NAMESPACES}) and relkind in ('v', 'm', 'S', 'i', 'I')
  union all select 4, 'routine', oid::regprocedure::text from pg_proc where pronamespace in (${USER_NAMESPACES})
  union all select 5, 'type', oid::regtype::text from pg_type where typnamespace in (${USER_NAMESPACES}) and typtype in ('e', 'd', 'r')
  union all select 5, 'type', oid::regtype::text from pg_type t where typnamespace in (${USER_NAMESPACES}) and typtype = 'c'
    and (select relkind from pg_class where oid = t.typrelid) = 'c'
  union all select 6, 'extension', quote_ident(extname) from pg_extension
  union all select 7, 'schema', quote_ident(nspname) from pg_namespace where oid in (${USER_NAMESPACES})
) as o order by rank, kind, name`;

/** A digest of everything about the schema that the drops above do not restore. */
const FINGERPRINT = `
select md5(string_agg(x, E'\\n' order by x)) as fingerprint from (
  select 'c ' || oid::regclass::text || ' ' || relkind::text || ' ' || relpersistence::text || ' ' || relrowsecurity || ' ' || coalesce(array_to_string(reloptions, ','), '')
    from pg_class where relnamespace in (${USER_NAMESPACES})
  union all select 'a ' || a.attrelid::regclass::text || ' ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
      || a.attnotnull || ' ' || a.attidentity::text || ' ' || a.attgenerated::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    from pg_attribute a join pg_class c on c.oid = a.attrelid left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where c.relnamespace in (${USER_NAMESPACES}) and a.attnum > 0 and not a.attisdropped
  union all select 'k ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) from pg_constraint
    where connamespace in (${USER_NAMESPACES})
  union all select 'i ' || pg_get_indexdef(indexrelid) from pg_index where indrelid in (select oid from pg_class where relnamespace in (${USER_NAMESPACES}))
  union all select 'g ' || pg_get_triggerdef(oid) || ' ' || tgenabled::text from pg_trigger where not tgisinternal
  union all select 'f ' || oid::regprocedure::text || ' ' || md5(prosrc) from pg_proc where pronamespace in (${USER_NAMESPACES})
  union all select 't ' || oid::regtype::text from pg_type where typnamespace in (${USER_NAMESPACES})
  union all select 'n ' || nspname || ' ' || coalesce(array_to_string(nspacl, ','), '') from pg_namespace where oid in (${USER_NAMESPACES})
  union all select 'e ' || extname || ' ' || extversion from pg_extension
  union all select 's ' || coalesce(array_to_string(setconfig, ','), '') from pg_db_role_setting
    where setdatabase = (select oid from pg_database where datname = current_database())
  union all select 'l ' || count(*) from pg_largeobject_metadata
) as f(x)`;

const TABLES = `select oid::regclass::text as name from pg_class where relnamespace in (${USER_NAMESPACES}) and relkind in ('r', 'p') order by 1`;

/** Pairs (referenced, referencing) of the foreign keys: a table emptied empties the tables referencing it too. */
const FOREIGN_KEYS = `select confrelid::regclass::text as referenced, conrelid::regclass::text as referencing from pg_constraint where contype = 'f'`;

/** Each sequence with the arguments of `setval` that give it its present state. */
const SEQUENCES = `select quote_ident(schemaname) || '.' || quote_ident(sequencename) as name,
    case when last_value is null then start_value || ', false' else last_value || ', true' end as value
  from pg_sequences where schemaname not like 'pg\\_%' order by 1`;

/** The rows in the order a scan reads them, as `json_agg` took them for the snapshot. */
const rowsDigest = (table: string): string => `(select md5(coalesce(string_agg(t::text, E'\\n'), '')) from ${table} as t)`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

interface Snapshot {
  readonly objects: ReadonlySet<string>;
  readonly fingerprint: string;
  readonly tables: readonly string[];
  /** The tables the migrations filled: their rows as JSON, and their digest. */
  readonly seeded: ReadonlyMap<string, { readonly json: string; readonly digest: string }>;
  /** For each table, the tables emptied with it: itself and those whose foreign keys reach it. */
  readonly cascade: ReadonlyMap<string, readonly string[]>;
  /**
   * Every table in an order in which each can be emptied with DELETE, after the tables whose foreign
   * keys point at it; undefined when the keys form a cycle (then TRUNCATE … CASCADE).
   */
  readonly deleteOrder: readonly string[] | undefined;
  readonly sequences: ReadonlyMap<string, string>;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const objectsOf = async (client: pg.Client): Promise<string[]> =>
  (await client.query<{ kind: string; name: string }>(OBJECTS)).rows.map((r) => `${r.kind}\t${r.name}`);
const fingerprintOf = async (client: pg.Client): Promise<string> =>
  (await client.query<{ fingerprint: string }>(FINGERPRINT)).rows[0]!.fingerprint;
const sequencesOf = async (client: pg.Client): Promise<Map<string, string>> =>
  new Map((await client.query<{ name: string; value: string }>(SEQUENCES)).rows.map((r) => [r.name, r.value]));

async function snapshotOf(client: pg.Client): Promise<Snapshot> {
  const tables = (await client.query<{ name: string }>(TABLES)).rows.map((r) => r.name);
  const seeded = new Map<string, { json: string; digest: string }>();
  for (const table of tables) {
    const { rows } = await client.query<{ n: number; json: string; digest: string }>(
      `select (select count(*)::integer from ${table}) as n, (select coalesce(json_agg(t), '[]')::text from ${table} as t) as json, ${rowsDigest(table)} as digest`,
    );
    if (rows[0]!.n > 0) seeded.set(table, { json: rows[0]!.json, digest: rows[0]!.digest });
  }
  const keys = (await client.query<{ referenced: string; referencing: string }>(FOREIGN_KEYS)).rows;
  const cascade = new Map<string, string[]>();
  for (const table of tables) {
    const reached = new Set([table]);
    for (const next of reached) for (const key of keys) if (key.referenced === next) reached.add(key.referencing);
    cascade.set(table, [...reached]);
  }
  return {
    objects: new Set(await objectsOf(client)),
    fingerprint: await fingerprintOf(client),
    tables,
    seeded,
    cascade,
    deleteOrder: deleteOrder(tables, keys),
    sequences: await sequencesOf(client),
  };
}

/** Ends every other client session of the database and waits until they are gone. */
async function endOtherSessions(client: pg.Client): Promise<void> {
  const others = `from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;
  await client.query(`select pg_terminate_backend(pid) ${others}`);
  for (let waited = 0; ; waited += 5) {
    const { rows } = await client.query<{ n: number }>(`select count(*)::integer as n ${others}`);
    if (rows[0]!.n === 0) return;
    if (waited > 10_000) throw new Error(`${rows[0]!.n} sessions of the shared test database do not end`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Drops what the tests added; false when that is not enough (the template's own objects changed). */
async function dropAdded(client: pg.Client, snapshot: Snapshot): Promise<boolean> {
  const added = (await objectsOf(client)).filter((object) => !snapshot.objects.has(object));
  if (added.length > 0) {
    const drops = added.map((object) => {
      const [kind, name] = object.split('\t') as [string, string];
      return `drop ${kind} if exists ${name} cascade;`;
    });
    try {
      await client.query(`begin; ${drops.join(' ')} commit;`);
    } catch {
      await client.query('rollback');
      return false;
    }
  }
  return (await fingerprintOf(client)) === snapshot.fingerprint;
}

/**
 * `tables` in an order in which each can be emptied with DELETE: after every other table whose foreign
 * keys point at it. Undefined when their keys form a cycle.
 */
function deleteOrder(tables: readonly string[], keys: readonly { referenced: string; referencing: string }[]): string[] | undefined {
  const order: string[] = [];
  const left = new Set(tables);
  while (left.size > 0) {
    const free = [...left].filter(
      (table) => !keys.some((key) => key.referenced === table && key.referencing !== table && left.has(key.referencing)),
    );
    if (free.length === 0) return undefined;
    for (const table of free) {
      order.push(table);
      left.delete(table);
    }
  }
  return order;
}

/** Empties the tables that changed and gives the migrations' rows and the sequences their values back. */
async function restoreRows(client: pg.Client, snapshot: Snapshot): Promise<void> {
  const checks = snapshot.tables.map((table) => {
    const seed = snapshot.seeded.get(table);
    return seed === undefined
      ? `select ${literal(table)} as name, exists (select 1 from ${table}) as changed`
      : `select ${literal(table)}, ${rowsDigest(table)} <> ${literal(seed.digest)}`;
  });
  const changed = (await client.query<{ name: string; changed: boolean }>(checks.join(' union all '))).rows
    .filter((r) => r.changed)
    .map((r) => r.name);
  const emptied = new Set(changed.flatMap((table) => snapshot.cascade.get(table) ?? [table]));
  if (emptied.size > 0) {
    const refill = [...emptied].flatMap((table) => {
      const seed = snapshot.seeded.get(table);
      return seed === undefined
        ? []
        : [`insert into ${table} overriding system value select * from json_populate_recordset(null::${table}, ${literal(seed.json)});`];
    });
    // DELETE rather than TRUNCATE where the foreign keys allow an order: the tables are small, and a
    // TRUNCATE gives each table and index a new file (about 50 ms a reset). The sequences are set back below.
    // The order of all tables holds for those emptied: they include every table referencing one of them.
    const empty =
      snapshot.deleteOrder === undefined
        ? `truncate ${[...emptied].join(', ')} cascade;`
        : snapshot.deleteOrder
            .filter((table) => emptied.has(table))
            .map((table) => `delete from ${table};`)
            .join(' ');
    await client.query(`begin; ${empty} ${refill.join(' ')} commit;`);
  }
  const sequences = await sequencesOf(client);
  const resets = [...snapshot.sequences]
    .filter(([name, value]) => sequences.get(name) !== value)
    .map(([name, value]) => `select setval(${literal(name)}, ${value});`);
  if (resets.length > 0) await client.query(resets.join(' '));
}

export interface ResettableDatabase {
  /** Puts the database back into the state it was made in. */
  reset(): Promise<void>;
}

/**
 * Takes the state of the database at `url`, just made from the template, for `reset()`; `remake()`
 * drops and makes it again (when a reset cannot undo what a test did).
 */
export async function resettable(url: string, remake: () => Promise<void>): Promise<ResettableDatabase> {
  const snapshot = await withClient(url, snapshotOf);
  return {
    async reset() {
      const restored = await withClient(url, async (client) => {
        await endOtherSessions(client);
        if (!(await dropAdded(client, snapshot))) return false;
        await restoreRows(client, snapshot);
        return true;
      });
      if (!restored) await remake();
    },
  };
}
