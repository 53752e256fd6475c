/** CommonService over Connect/gRPC: the states list. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { CommonService } from "../../generated/proto/leadprovider/v1/common_service_pb.ts";
import type { StateService } from "./state.service.ts";

export function createCommonRpc(states: StateService): ServiceImpl<typeof CommonService> {
  return {
    async listStates() {
      return { states: await states.list() };
    },
  };
}
