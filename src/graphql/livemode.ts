import type { Context } from "./context.js";

/**
 * The `livemode` field of every resource object (SPEC §15): true for an object of live mode, false for
 * one of test mode. A caller only ever sees the rows of its own tenant, which is of its own mode, so
 * the caller's mode is the object's: read from the authenticated caller the operation already holds,
 * it costs no query per object. Use as `livemode: t.boolean(LIVEMODE_FIELD)`.
 */
export const LIVEMODE_FIELD = {
  description: "true for an object of live mode, false for one of test mode",
  resolve: async (_parent: unknown, _args: unknown, ctx: Context) => (await ctx.client()).mode === "live",
};
