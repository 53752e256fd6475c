/** All SQL about the states reference table. */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { UsState } from "./states.ts";

export async function listStates(db: Kysely<Database>): Promise<UsState[]> {
  return db.selectFrom("states").select(["id", "code", "name"]).orderBy("id").execute();
}
