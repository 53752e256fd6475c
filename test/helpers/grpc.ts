/**
 * Clients no one here wrote: @grpc/grpc-js with @grpc/proto-loader reading the .proto files,
 * and connect-node's own Connect, gRPC and gRPC-Web transports.
 */
import { fileURLToPath } from "node:url";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, type ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const PROTO_DIR = fileURLToPath(new URL("../../proto", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: grpc-js clients are dynamically typed
type GrpcClient = any;

export function grpcJsClient(port: number, service: string): GrpcClient {
  const definition = protoLoader.loadSync(`leadprovider/v1/${serviceFile(service)}`, {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as GrpcClient;
  const Ctor = pkg.leadprovider.v1[service];
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

function serviceFile(service: string): string {
  return `${service
    .replace(/Service$/, "")
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase()}_service.proto`;
}

/** Calls a unary grpc-js method; resolves with the response or the grpc error. */
export function grpcCall<T = GrpcClient>(
  client: GrpcClient,
  method: string,
  request: unknown,
  authorization?: string,
): Promise<{ response?: T; error?: grpc.ServiceError }> {
  const metadata = new grpc.Metadata();
  if (authorization) metadata.set("authorization", `Bearer ${authorization}`);
  return new Promise((resolve) => {
    client[method](request, metadata, (error: grpc.ServiceError | null, response: T) => {
      resolve(error ? { error } : { response });
    });
  });
}

export type Protocol = "connect" | "grpc" | "grpc-web";
export const PROTOCOLS: readonly Protocol[] = ["connect", "grpc", "grpc-web"];

export function connectClient<S extends DescService>(service: S, port: number, protocol: Protocol): Client<S> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl })
      : protocol === "grpc-web"
        ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })
        : createConnectTransport({ baseUrl, httpVersion: "1.1" });
  return createClient(service, transport);
}

export const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** What `p` was rejected with (undefined when it resolved). */
export const rejection = async (p: Promise<unknown>) =>
  (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ConnectError;

/** A CreateLead request over gRPC with the required fields; override any. */
export const grpcLead = (fields: Record<string, unknown>) =>
  ({
    firstName: "Jane",
    lastName: "Doe",
    email: "jane@example.com",
    phoneNumber: "+1 310 555 0100",
    originZip: "90210",
    ...fields,
  }) as never;
