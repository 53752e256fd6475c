/** The states list, read from the states table (the IDs stored on leads). */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { listStates } from "./state.repository.ts";
import type { UsState } from "./states.ts";

export function createStateService(db: Kysely<Database>) {
  return {
    async list(): Promise<UsState[]> {
      return listStates(db);
    },
  };
}

export type StateService = ReturnType<typeof createStateService>;
