import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import SimpleObjectsPlugin from "@pothos/plugin-simple-objects";
import type PrismaTypes from "../generated/pothos-prisma-types.js";
import { getDatamodel } from "../generated/pothos-prisma-types.js";
import type { Context } from "./context.js";
import { AUDIT_LOG_PLUGIN, PERMISSIONS_PLUGIN } from "./permissions-plugin.js";

/** The schema builder: plugins and scalar typing only. Domains add their types in their own folders. */
export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: Context;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date | string };
    Date: { Input: string; Output: string };
    Decimal: { Input: string; Output: { toString(): string } | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [PrismaPlugin, RelayPlugin, SimpleObjectsPlugin, PERMISSIONS_PLUGIN, AUDIT_LOG_PLUGIN],
  defaultFieldNullability: false,
  // Connections only: ids stay the records' own (no global Node ids), and mutations take no clientMutationId.
  relay: { cursorType: "String", clientMutationId: "omit", nodeQueryOptions: false, nodesQueryOptions: false },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === "production" ? null : "warn",
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
