import { type Kysely, sql } from "kysely";

// The request log's growth is bounded whatever anonymous callers send (request-log.listing.ts,
// docs/request-log.md). A request no key named a provider for keeps no body, only its size and a
// SHA-256; every kept body is cut to a few kilobytes (request-log.mask.ts), and the entry says
// so. Requests beyond the listing budget (successful reads past a provider's examples, refused
// by a limiter, anonymous past their share) are counted per minute in `request_log_tallies`, one
// row per minute, provider (0: none), mode ('live', 'test', 'none'), outcome, code and, for
// answered reads, operation, instead of a row each.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table request_log
      add column request_body_bytes integer,
      add column request_body_sha256 text,
      add column request_body_truncated boolean not null default false`.execute(db);
  await sql`
    create table request_log_tallies (
      minute timestamptz not null,
      provider_id bigint not null,
      mode text not null check (mode in ('live', 'test', 'none')),
      outcome text not null,
      code text not null,
      operation text not null,
      requests integer not null,
      primary key (minute, provider_id, mode, outcome, code, operation)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table request_log_tallies`.execute(db);
  await sql`
    alter table request_log
      drop column request_body_bytes,
      drop column request_body_sha256,
      drop column request_body_truncated`.execute(db);
}
