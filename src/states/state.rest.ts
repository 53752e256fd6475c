/** The states list over REST. */
import { Router } from "express";
import type { RestFeature } from "../rest/feature.ts";
import { operation } from "../rest/typed.ts";
import type { StateService } from "./state.service.ts";

export const STATES_PATH = "/api/v1/common/states/";

export function stateRoutes(states: StateService): RestFeature {
  const router = Router();
  router.get(
    STATES_PATH,
    operation("listStates", async (_req, res) => {
      res.json(await states.list());
    }),
  );
  return { router };
}
