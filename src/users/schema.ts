import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";

builder.prismaObject("User", {
  fields: (t) => ({
    id: t.exposeID("id"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    firstName: t.exposeString("firstName"),
    lastName: t.exposeString("lastName"),
    phoneNumber: t.exposeString("phoneNumber"),
    email: t.exposeString("email"),
    clientId: t.exposeID("clientId"),
  }),
});

const CreateUserInput = builder.inputType("CreateUserInput", {
  fields: (t) => ({
    email: t.string({ required: true }),
    firstName: t.string({ required: true }),
    lastName: t.string({ required: true }),
    phoneNumber: t.string({ required: true, description: "E.164 mobile number" }),
    dob: t.string({ required: true, description: "YYYY-MM-DD; accepted, never returned" }),
  }),
});

builder.queryFields((t) => ({
  user: t.prismaField({
    permission: "users:read",
    type: "User",
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.users.get(await clientIdOf(ctx), args.id, query),
  }),
  users: t.prismaField({
    permission: "users:read",
    type: ["User"],
    description: "The client's users, oldest first.",
    args: { page: t.arg.int({ defaultValue: 1 }), limit: t.arg.int({ defaultValue: 10 }) },
    resolve: async (query, _root, args, ctx) => ctx.services.users.list(await clientIdOf(ctx), args, query),
  }),
}));

builder.mutationFields((t) => ({
  createUser: t.prismaField({
    permission: "users:write",
    type: "User",
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.users.create(await clientIdOf(ctx), args.input),
  }),
}));
