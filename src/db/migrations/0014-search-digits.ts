import { type Kysely, sql } from "kysely";

// The back office's substring search finds a term through the trigram index, whose
// posting lists grow with the table; digit trigrams are in every phone, order number and external
// id, so a run of digits (part of a phone, an order number, the digits of an email) read lists of
// a hundred thousand leads each at 5M leads (8–10 ms). `lead_search_digit_grams(text)` is every
// 5-digit substring of the text's digit runs; a GIN index over it (db/indexes.ts,
// leads_search_digits_idx, built concurrently after the migrations) finds the leads holding all the
// 5-grams of a term's digits, a few among millions, and the term itself is then checked on them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function lead_search_digit_grams(t text) returns text[]
      language sql immutable parallel safe
      as $$ select array(select substr(r, i, 5)
                          from unnest(string_to_array(regexp_replace(t, '[^0-9]+', ' ', 'g'), ' ')) r,
                               generate_series(1, length(r) - 4) i) $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists leads_search_digits_idx`.execute(db);
  await sql`drop function lead_search_digit_grams(text)`.execute(db);
}
