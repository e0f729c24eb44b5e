import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { METADATA_DESCRIPTION, METADATA_INPUT_DESCRIPTION, storedMetadata } from "../metadata.js";

builder.prismaObject("User", {
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    firstName: t.exposeString("firstName"),
    lastName: t.exposeString("lastName"),
    phoneNumber: t.exposeString("phoneNumber"),
    email: t.exposeString("email"),
    clientId: t.exposeID("clientId"),
    externalId: t.exposeString("externalId", { nullable: true, description: "Your own id for the user, unique among your users" }),
    metadata: t.field({ type: "JSON", description: METADATA_DESCRIPTION, resolve: (user) => storedMetadata(user.metadata) }),
  }),
});

const CreateUserInput = builder.inputType("CreateUserInput", {
  fields: (t) => ({
    email: t.string({ required: true }),
    firstName: t.string({ required: true }),
    lastName: t.string({ required: true }),
    phoneNumber: t.string({ required: true, description: "E.164 mobile number" }),
    dob: t.string({ required: true, description: "YYYY-MM-DD; accepted, never returned" }),
    externalId: t.string({ description: "Your own id for the user (1–180 characters): a second user with it is a CONFLICT naming the first" }),
    metadata: t.field({ type: "JSON", description: METADATA_INPUT_DESCRIPTION }),
  }),
});

const UpdateUserInput = builder.inputType("UpdateUserInput", {
  fields: (t) => ({
    externalId: t.string({ description: "Sets your id for the user (1–180 characters, unique); null removes it; omitted: unchanged" }),
    metadata: t.field({ type: "JSON", description: `Merged into the user's: ${METADATA_INPUT_DESCRIPTION}` }),
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
    description: "The client's users, oldest first; externalId and metadata (pairs that must all match) filter them.",
    args: {
      page: t.arg.int({ defaultValue: 1 }),
      limit: t.arg.int({ defaultValue: 10 }),
      externalId: t.arg.string(),
      metadata: t.arg({ type: "JSON", description: "An object of key-value pairs, all of which a user's metadata must hold" }),
    },
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
  updateUser: t.prismaField({
    permission: "users:write",
    type: "User",
    description: "Merges metadata (a key set to \"\" or null is removed) and sets or removes the externalId.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateUserInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.users.update(await clientIdOf(ctx), args.id, args.input),
  }),
}));
