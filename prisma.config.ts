// Prisma CLI configuration: the JS engine with a driver adapter, so that `prisma generate` and
// `prisma migrate diff` work offline (no native engine download). See ../shared/notes/toolchain.md.
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () =>
    new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://localhost:5432/postgres" }),
});
