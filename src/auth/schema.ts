import { builder } from "../graphql/builder.js";

const ClientType = builder.prismaObject("Client", {
  fields: (t) => ({
    id: t.exposeID("id"),
    email: t.exposeString("email"),
    name: t.exposeString("name", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const OtpRequested = builder.simpleObject("OtpRequested", {
  fields: (t) => ({ message: t.string(), expiresAt: t.field({ type: "DateTime" }) }),
});

const SessionToken = builder.objectRef<{ token: string; expiresAt: Date; client: { id: string } }>("SessionToken").implement({
  fields: (t) => ({
    token: t.exposeString("token"),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
    client: t.field({ type: ClientType, resolve: (session) => session.client as never }),
  }),
});

const AuthStatus = builder.objectRef<{ authenticated: boolean; expiresAt: Date; client: { id: string } }>("AuthStatus").implement({
  fields: (t) => ({
    authenticated: t.exposeBoolean("authenticated"),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
    client: t.field({ type: ClientType, resolve: (status) => status.client as never }),
  }),
});

const Success = builder.simpleObject("Success", { fields: (t) => ({ success: t.boolean() }) });

builder.queryFields((t) => ({
  me: t.prismaField({
    permission: "authenticated",
    type: "Client",
    description: "The calling client.",
    resolve: async (query, _root, _args, ctx) =>
      ctx.prisma.client.findUniqueOrThrow({ ...query, where: { id: (await ctx.client()).clientId } }),
  }),
  authStatus: t.field({
    permission: "authenticated",
    type: AuthStatus,
    description: "The session behind the x-client-auth token.",
    resolve: async (_root, _args, ctx) => ctx.services.auth.status(await ctx.client()),
  }),
}));

builder.mutationFields((t) => ({
  requestOtp: t.field({
    permission: "public",
    type: OtpRequested,
    description: "Mails a 6-digit sign-in code, valid 10 minutes. Needs no credentials.",
    args: { email: t.arg.string({ required: true }), name: t.arg.string() },
    resolve: (_root, args, ctx) => ctx.services.auth.requestOtp(args),
  }),
  verifyOtp: t.field({
    permission: "public",
    type: SessionToken,
    description: "Exchanges the code for a 1-hour session token; signs the client up on first use.",
    args: { email: t.arg.string({ required: true }), otp: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.auth.verifyOtp(args),
  }),
  logout: t.field({
    permission: "authenticated",
    type: Success,
    description: "Revokes the session token in x-client-auth.",
    resolve: async (_root, _args, ctx) => ctx.services.auth.logout(await ctx.client()),
  }),
}));
